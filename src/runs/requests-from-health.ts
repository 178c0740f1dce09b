/**
 * Which service requests health events call for, as a pure function: a vehicle whose health
 * turned critical gets its critical and high alerts as items; an overdue maintenance alert
 * gets its maintenance type as an item. The runs stage submits them (folding into the vehicle's
 * open run) for companies with `service_requests_from_health` on (the default).
 */
import type { VehicleAlert } from '../domain/vehicle.js';
import { typeLabel } from '../domain/labels.js';

export interface HealthEventRow {
  id: number;
  vehicleId: string;
  kind: string;
  payload: Record<string, unknown>;
}

export interface RequestedItem {
  title: string;
  description: string | null;
  type: string;
}

export function planHealthRequests(
  events: readonly HealthEventRow[],
  currentAlerts: ReadonlyMap<string, readonly VehicleAlert[]>,
): Map<string, RequestedItem[]> {
  const requests = new Map<string, RequestedItem[]>();
  const add = (vehicleId: string, item: RequestedItem) => {
    const items = requests.get(vehicleId) ?? [];
    if (!items.some((existing) => existing.type === item.type)) items.push(item);
    requests.set(vehicleId, items);
  };
  for (const event of events) {
    if (event.kind === 'status_changed' && event.payload.to === 'critical') {
      for (const alert of currentAlerts.get(event.vehicleId) ?? []) {
        if (alert.severity === 'critical' || alert.severity === 'high') {
          add(event.vehicleId, {
            title: alert.display_name,
            description: `Raised by vehicle health (${alert.severity})`,
            type: alert.type,
          });
        }
      }
    } else if ((event.kind === 'alert_opened' || event.kind === 'alert_changed') && event.payload.overdue === true) {
      const type = String(event.payload.type);
      add(event.vehicleId, { title: typeLabel(type), description: String(event.payload.display_name), type });
    }
  }
  return requests;
}
