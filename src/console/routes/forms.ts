/** Schemas of console form bodies: every string bounded, and the CSRF field every form carries. */
import Type, { type TProperties } from 'typebox';

const csrf = Type.String({ maxLength: 100 });

export const CsrfField = Type.Object({ _csrf: csrf }, { additionalProperties: false });

export function Form<P extends TProperties>(properties: P) {
  return Type.Object({ ...properties, _csrf: csrf }, { additionalProperties: false });
}

/** A checkbox group: absent, one value, or several. */
export function Checkboxes(maxLength: number, maxItems: number) {
  return Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems })]));
}

export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
