/** GET /v1/audit-events (docs/console.md "Activity"): the company's audit log, newest first. */
import Type from 'typebox';
import { auditActions, auditTargetTypes } from '../../audit/record.js';
import { Nullable, StringEnum, Timestamp } from '../../web/schemas.js';

export const AuditEventsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
    before: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,18}$',
        maxLength: 18,
        description:
          'Cursor: only events older than the event with this id. Pass the last id of a page to read the next; ' +
          'pages stay stable while new events are added.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AuditEvent = Type.Object({
  id: Type.String({ description: 'Increasing in the order events were written; the paging cursor.' }),
  actor: Type.Object({
    kind: StringEnum(['user', 'api_key', 'operator'] as const),
    id: Nullable(Type.String({ description: "The console user's or API key's id; null for the operator." })),
    label: Type.String({
      description: "The user's email, the key's prefix (never more of the key), or `operator`.",
    }),
  }),
  action: StringEnum(Object.keys(auditActions) as Array<keyof typeof auditActions>),
  target: Type.Object({
    type: StringEnum(auditTargetTypes),
    id: Type.String(),
  }),
  occurred_at: Timestamp,
});
