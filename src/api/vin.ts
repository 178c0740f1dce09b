/** The VIN of a paid call, checked by src/domain/vin.ts; a 400 names the rule that failed. */
import { AppError } from '../errors.js';
import { checkVin } from '../domain/vin.js';

/** The normalized VIN, or 400 INVALID_REQUEST with `details.rule` and the field error. */
export function requireValidVin(input: string): string {
  const check = checkVin(input);
  if (check.ok) return check.vin;
  throw new AppError('INVALID_REQUEST', `vin: ${check.message}`, {
    errors: [{ field: 'vin', message: check.message }],
    rule: check.rule,
  });
}
