import type { Static } from 'typebox';
import type { ApiKeyRecord } from '../../db/api-keys.js';
import type { CompanyRecord } from '../../db/companies.js';
import type { VehicleRecord } from '../../domain/vehicle.js';
import type { AdminVehicle, ApiKey, Company } from '../schemas/admin.js';
import { presentVehicle } from './vehicle.js';

export function presentCompany(company: CompanyRecord): Static<typeof Company> {
  return {
    id: company.id,
    name: company.name,
    external_ids: company.externalIds,
    created_at: company.createdAt.toISOString(),
  };
}

export function presentApiKey(key: ApiKeyRecord): Static<typeof ApiKey> {
  return {
    id: key.id,
    company_id: key.companyId,
    name: key.name,
    prefix: key.keyPrefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

export function presentAdminVehicle(vehicle: VehicleRecord): Static<typeof AdminVehicle> {
  return {
    ...presentVehicle(vehicle),
    company_id: vehicle.companyId,
    active: vehicle.active,
    provider_vehicle_id: vehicle.providerVehicleId,
    provider_connection_id: vehicle.providerConnectionId,
    home_location_id: vehicle.homeLocationId,
  };
}
