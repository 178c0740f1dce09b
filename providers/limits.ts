/**
 * What a normalized sample may hold before it reaches Postgres, in one place. The ingest stage
 * checks every adapter's output against these once (src/ingest/sanitize.ts), the way Traccar's
 * BaseProtocolDecoder filters every decoder's positions, so no adapter has to remember them.
 * (The future limit, `maxFutureSkewMs`, is the domain's: src/domain/sample.ts.)
 */

/** Samples recorded before this are a device clock that was never set (GPS week rollover, year 0). */
export const earliestSampleTime = new Date('2000-01-01T00:00:00Z');

/**
 * Longest provider vehicle id, in characters: the operator API maps ids up to this length
 * (provider_vehicle_id maxLength), so a longer one could never name a vehicle.
 */
export const maxProviderVehicleIdChars = 200;

/** Longest signal name, in characters: the vocabulary's longest is 20, Traccar's attributes are shorter. */
export const maxSignalNameChars = 64;

/**
 * Largest value of a signal outside the vocabulary, in bytes of its JSON text: such values are
 * stored as they came, in every reading and in the vehicle's read model.
 */
export const maxUnknownSignalValueBytes = 4 * 1024;

/**
 * Fields of the vehicle read model (`vehicles.signals`) that are not signals: no sample may take
 * these names, or a provider's unknown key would overwrite them there.
 */
export const readModelFields = ['odometer', 'observed_at'] as const;
