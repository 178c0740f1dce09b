/**
 * The monitoring detectors, one per kind, in the catalogue's order (src/domain/monitoring-kinds.ts: maintenance, system,
 * incident, location, usage). Listed explicitly: adding, removing or reordering a detector is a
 * reviewed change here. The engine runs only the subscription's kinds, in this order.
 */
import { absWarningDetector } from './detectors/abs-warning.js';
import { aggressiveAccelerationDetector } from './detectors/aggressive-acceleration.js';
import { airbagDeploymentDetector } from './detectors/airbag-deployment.js';
import { airbagWarningDetector } from './detectors/airbag-warning.js';
import { batteryVoltageLowDetector } from './detectors/battery-voltage-low.js';
import { brakeWearDetectedDetector } from './detectors/brake-wear-detected.js';
import { checkEngineLightDetector } from './detectors/check-engine-light.js';
import { coolantTemperatureHighDetector } from './detectors/coolant-temperature-high.js';
import { excessiveIdlingDetector } from './detectors/excessive-idling.js';
import { fuelLevelLowDetector } from './detectors/fuel-level-low.js';
import { geoFenceEntryDetector } from './detectors/geo-fence-entry.js';
import { geoFenceExitDetector } from './detectors/geo-fence-exit.js';
import { hardImpactDetector } from './detectors/hard-impact.js';
import { maintenanceDueDetector } from './detectors/maintenance-due.js';
import { mileageThresholdDetector } from './detectors/mileage-threshold.js';
import { oilChangeNeededDetector } from './detectors/oil-change-needed.js';
import { rapidDecelerationDetector } from './detectors/rapid-deceleration.js';
import { speedLimitExceededDetector } from './detectors/speed-limit-exceeded.js';
import { tirePressureLowDetector } from './detectors/tire-pressure-low.js';
import { transmissionFaultDetector } from './detectors/transmission-fault.js';
import type { Detector } from './types.js';

// Each detector keeps its own state type; the engine only passes that state back to the same detector.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const monitoringDetectors: ReadonlyArray<Detector<any>> = [
  oilChangeNeededDetector,
  brakeWearDetectedDetector,
  tirePressureLowDetector,
  batteryVoltageLowDetector,
  coolantTemperatureHighDetector,
  checkEngineLightDetector,
  absWarningDetector,
  airbagWarningDetector,
  transmissionFaultDetector,
  hardImpactDetector,
  rapidDecelerationDetector,
  aggressiveAccelerationDetector,
  airbagDeploymentDetector,
  geoFenceExitDetector,
  geoFenceEntryDetector,
  speedLimitExceededDetector,
  excessiveIdlingDetector,
  mileageThresholdDetector,
  fuelLevelLowDetector,
  maintenanceDueDetector,
];
