import { randomInt } from 'node:crypto';

// Crockford base32: no I, L, O or U, so a code read aloud or copied by hand stays unambiguous.
const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A human-facing case reference such as `R-7K3Q9XMD`; stable, not a secret. */
export function newReferenceCode(): string {
  let code = 'R-';
  for (let i = 0; i < 8; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}
