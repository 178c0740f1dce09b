/** GET /v1/usage (docs/pricing.md): money in USD as numbers rounded to cents. */
import Type from 'typebox';
import { products } from '../../usage/pricing.js';
import { monthPattern } from '../../usage/months.js';
import { Nullable, StringEnum } from '../../web/schemas.js';

export const UsageQuery = Type.Object(
  {
    month: Type.Optional(
      Type.String({ pattern: monthPattern, maxLength: 7, description: 'YYYY-MM (UTC); default the current month.' }),
    ),
  },
  { additionalProperties: false },
);

const DiscountTier = {
  percent_off: Type.Number(),
  from_unit: Type.Integer({ description: "The month's unit (1-based) the discount starts at." }),
  custom_pricing: Type.Boolean(),
};

export const Usage = Type.Object({
  month: Type.String(),
  currency: Type.Literal('USD'),
  products: Type.Array(
    Type.Object({
      product: StringEnum(products),
      quantity: Type.Integer(),
      gross: Type.Number(),
      discount: Type.Number(),
      net: Type.Number(),
      lines: Type.Array(
        Type.Object({
          tier: Type.String(),
          quantity: Type.Integer(),
          unit_price: Type.Number(),
          gross: Type.Number(),
        }),
      ),
      discount_tier: Type.Object(DiscountTier, { description: 'The band of the latest unit.' }),
      next_discount_tier: Nullable(
        Type.Object(
          { ...DiscountTier, units_to_go: Type.Integer({ description: 'More units until the next band applies.' }) },
          { description: 'null past the last band.' },
        ),
      ),
      custom_pricing: Type.Boolean({
        description: 'Monitoring from the 10,000th vehicle: negotiated; figures use the 25 % discount meanwhile.',
      }),
      projected: Type.Object(
        { quantity: Type.Integer(), net: Type.Number() },
        { description: 'Month-end forecast at the pace so far.' },
      ),
    }),
  ),
  total: Type.Number(),
  projected_total: Type.Number(),
  daily: Type.Array(
    Type.Object({ date: Type.String(), history_report: Type.Integer(), verification: Type.Integer() }),
    { description: 'Metered calls per UTC day, through today.' },
  ),
});
