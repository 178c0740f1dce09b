import { describe, expect, it, vi } from 'vitest';
import { assembleAddress, splitAddress, type AddressParts } from '../../../src/domain/address.js';

const none: AddressParts = {
  street_1: null,
  street_2: null,
  city: null,
  state: null,
  postal_code: null,
  country: null,
};

function p(parts: Partial<AddressParts>): AddressParts {
  return { ...none, ...parts };
}

const us = (
  street_1: string | null,
  city: string | null,
  state: string,
  postal_code: string | null,
  street_2: string | null = null,
) => p({ street_1, street_2, city, state, postal_code, country: 'US' });

const splits: Array<[string, AddressParts]> = [
  // United States
  ['1 Main St, Springfield, IL 62701', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['400 W Lake St Suite 200, Chicago, IL 60606, USA', us('400 W Lake St', 'Chicago', 'IL', '60606', 'Suite 200')],
  ['  1   Main St ,  Springfield , IL   62701  ', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['1 Main St\nSpringfield, IL 62701', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['1 main st, springfield, il 62701', us('1 main st', 'springfield', 'il', '62701')],
  ['1 Main St, Springfield, Illinois 62701', us('1 Main St', 'Springfield', 'Illinois', '62701')],
  ['1 Main St, Springfield, IL, 62701', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['1 Main St, Springfield, IL 62701 USA', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['1 Main St, Springfield, IL 62701, U.S.A.', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['1 Main St, Springfield, IL 62701, United States of America', us('1 Main St', 'Springfield', 'IL', '62701')],
  ['Springfield IL 62701', us(null, 'Springfield', 'IL', '62701')],
  ['Chicago, IL 60606', us(null, 'Chicago', 'IL', '60606')],
  ['PO Box 123, Springfield, IL 62701-1234', us('PO Box 123', 'Springfield', 'IL', '62701-1234')],
  ['P.O. Box 77, Anchorage, AK 99501', us('P.O. Box 77', 'Anchorage', 'AK', '99501')],
  ['Unit 5, 123 Industrial Pkwy, Columbus, OH 43215', us('123 Industrial Pkwy', 'Columbus', 'OH', '43215', 'Unit 5')],
  ['123 Industrial Pkwy, Ste. 5B, Columbus, OH 43215', us('123 Industrial Pkwy', 'Columbus', 'OH', '43215', 'Ste. 5B')],
  ['400 W Lake St #200, Chicago, IL 60606', us('400 W Lake St', 'Chicago', 'IL', '60606', '#200')],
  ['350 5th Ave, 34th Floor, New York, NY 10118', us('350 5th Ave', 'New York', 'NY', '10118', '34th Floor')],
  ['Bay 3, 500 Fleet Rd Bldg C, Joliet, IL 60431', us('500 Fleet Rd', 'Joliet', 'IL', '60431', 'Bldg C, Bay 3')],
  // A leading name line is left out, not put in street_2.
  ['Acme Fleet Yard, 400 W Lake St, Chicago, IL 60606', us('400 W Lake St', 'Chicago', 'IL', '60606')],
  ['1 Main St, Dover, DE 19901', us('1 Main St', 'Dover', 'DE', '19901')],
  ['1 Main St, Springfield, IL, USA', us('1 Main St', 'Springfield', 'IL', null)],
  ['San Juan, PR 00901', p({ city: 'San Juan', state: 'PR', postal_code: '00901', country: 'PR' })],
  // Street and city run together: the boundary is unknown, so neither is placed.
  ['1 Main St Springfield IL 62701', us(null, null, 'IL', '62701')],
  ['1 Main St, IL 62701', us(null, null, 'IL', '62701')],
  // Not a street: no house number.
  ['Route 9, Springfield, IL 62701', us(null, 'Springfield', 'IL', '62701')],
  ['Yard behind the Walmart, Springfield, IL 62701', us(null, 'Springfield', 'IL', '62701')],
  // Two house-numbered lines: which one is the street is a guess.
  ['2 Oak Ave, 1 Main St, Springfield, IL 62701', us(null, 'Springfield', 'IL', '62701')],
  // Canada
  [
    '100 Queen St W, Toronto, ON M5H 2N2',
    p({ street_1: '100 Queen St W', city: 'Toronto', state: 'ON', postal_code: 'M5H 2N2', country: 'CA' }),
  ],
  [
    '200 Bay St, Toronto, ON, M5J 2J2, Canada',
    p({ street_1: '200 Bay St', city: 'Toronto', state: 'ON', postal_code: 'M5J 2J2', country: 'CA' }),
  ],
  [
    '1 Bay Street, Toronto, ON M5J 2R8',
    p({ street_1: '1 Bay Street', city: 'Toronto', state: 'ON', postal_code: 'M5J 2R8', country: 'CA' }),
  ],
  [
    '1000 rue Sherbrooke Ouest, Montréal, QC H3A 3G4',
    p({ street_1: '1000 rue Sherbrooke Ouest', city: 'Montréal', state: 'QC', postal_code: 'H3A 3G4', country: 'CA' }),
  ],
  ['Toronto ON M5H2N2, CA', p({ city: 'Toronto', state: 'ON', postal_code: 'M5H2N2', country: 'CA' })],
  ["St. John's, NL A1C 5M2", p({ city: "St. John's", state: 'NL', postal_code: 'A1C 5M2', country: 'CA' })],
  // A city with digits in its name cannot be told from a street line.
  ['100 Mile House, BC V0K 2E0', p({ state: 'BC', postal_code: 'V0K 2E0', country: 'CA' })],
  // United Kingdom
  [
    '10 Downing Street, London SW1A 2AA, United Kingdom',
    p({ street_1: '10 Downing Street', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' }),
  ],
  [
    'Flat 3, 10 Downing Street, London, SW1A 2AA, UK',
    p({ street_1: '10 Downing Street', street_2: 'Flat 3', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' }),
  ],
  ['London, SW1A 2AA', p({ city: 'London', postal_code: 'SW1A 2AA', country: 'GB' })],
  [
    '221B Baker Street, London NW1 6XE',
    p({ street_1: '221B Baker Street', city: 'London', postal_code: 'NW1 6XE', country: 'GB' }),
  ],
  // "Westminster" is left over, so "London" might as well be a county line: city stays null.
  [
    '10 Downing Street, Westminster, London, SW1A 2AA',
    p({ street_1: '10 Downing Street', postal_code: 'SW1A 2AA', country: 'GB' }),
  ],
  ['10 Downing Street, SW1A 2AA', p({ postal_code: 'SW1A 2AA', country: 'GB' })],
  ['Rue de la Gare 1, St Helier JE2 4WE', p({ city: 'St Helier', postal_code: 'JE2 4WE', country: 'JE' })],
  // Germany
  [
    'Unter den Linden 77, 10117 Berlin, Germany',
    p({ street_1: 'Unter den Linden 77', city: 'Berlin', postal_code: '10117', country: 'DE' }),
  ],
  [
    'Unter den Linden 77, 10117 Berlin, DE',
    p({ street_1: 'Unter den Linden 77', city: 'Berlin', postal_code: '10117', country: 'DE' }),
  ],
  [
    'Hauptstr. 5a, 80331 München, Deutschland',
    p({ street_1: 'Hauptstr. 5a', city: 'München', postal_code: '80331', country: 'DE' }),
  ],
  [
    'Postfach 1234, 10117 Berlin, Germany',
    p({ street_1: 'Postfach 1234', city: 'Berlin', postal_code: '10117', country: 'DE' }),
  ],
  ['10117 Berlin, Deutschland', p({ city: 'Berlin', postal_code: '10117', country: 'DE' })],
  // "postcode city" after a name-then-number street: the parts are clear, the country is not (FR, IT, ES...).
  ['Unter den Linden 77, 10117 Berlin', p({ street_1: 'Unter den Linden 77', city: 'Berlin', postal_code: '10117' })],
  // A stated country alone is still a fact.
  ['Depot 4, USA', p({ country: 'US' })],
  ['Canada', p({ country: 'CA' })],
  // All null: no recognisable structure.
  ['Yard behind the Walmart on Route 9', none],
  ['Depot 4', none],
  ['Springfield', none],
  ['a, b, c', none],
  ['', none],
  ['   ', none],
  // "IL" without a ZIP could be Israel, "CA" Canada, "DE" Germany: not split unless the country is stated.
  ['Springfield, IL', none],
  ['1 Main St, Springfield, IL', none],
  ['1 Main St, Los Angeles, CA', none],
  ['1 Main St, Dover, DE', none],
  // A bare "NNNNN Name" reads as a US street line too.
  ['10117 Berlin', none],
  ['Acme Yard, 12345 W Olympic Blvd', none],
  // Countries we do not parse, and a stated country that contradicts the format.
  ['1 Rue de Rivoli, 75001 Paris, France', none],
  ['1 Main St, Springfield, IL 62701, Canada', none],
  ['10 Downing Street, London SW1A 2AA, USA', none],
  // Something after the locality that is not a country.
  ['1 Main St, Springfield, IL 62701, Attn Fleet Desk', none],
];

describe('splitAddress', () => {
  it('returns all null for null', () => {
    expect(splitAddress(null)).toEqual(none);
  });

  it.each(splits)('%j', (display, expected) => {
    expect(splitAddress(display)).toEqual(expected);
  });

  it('has a table of at least 30 cases', () => {
    expect(splits.length).toBeGreaterThanOrEqual(30);
  });
});

describe('assembleAddress', () => {
  it.each<[Parameters<typeof assembleAddress>[0], string | null]>([
    [
      { street: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701' },
      '1 Main St, Springfield, IL 62701',
    ],
    // The ZIP already says US, so the country is not repeated.
    [
      { street: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701', country: 'US' },
      '1 Main St, Springfield, IL 62701',
    ],
    [
      { street: '1 Main St', street_2: 'Suite 200', city: 'Springfield', state: 'IL', postal_code: '62701' },
      '1 Main St, Suite 200, Springfield, IL 62701',
    ],
    // Without a ZIP nothing in the line says US.
    [{ street: '1 Main St', city: 'Springfield', state: 'IL', country: 'US' }, '1 Main St, Springfield, IL, US'],
    [
      { street: '100 Queen St W', city: 'Toronto', state: 'ON', postal_code: 'M5H 2N2', country: 'CA' },
      '100 Queen St W, Toronto, ON M5H 2N2',
    ],
    [
      { street: '10 Downing Street', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' },
      '10 Downing Street, London SW1A 2AA',
    ],
    [
      { street: 'Unter den Linden 77', city: 'Berlin', postal_code: '10117', country: 'DE' },
      'Unter den Linden 77, 10117 Berlin, DE',
    ],
    [
      { street: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FR' },
      '1 Rue de Rivoli, Paris 75001, FR',
    ],
    [{ city: 'Springfield', state: 'IL' }, 'Springfield, IL'],
    [{ state: 'IL', postal_code: '62701' }, 'IL 62701'],
    [{ city: 'Springfield' }, 'Springfield'],
    [{ street: '  1  Main   St ', city: ' Springfield ' }, '1 Main St, Springfield'],
    [{ country: 'US' }, 'US'],
    [{}, null],
    [{ street: null, street_2: null, city: null, state: null, postal_code: null, country: null }, null],
    [{ street: '  ', city: '' }, null],
  ])('%j → %j', (parts, expected) => {
    expect(assembleAddress(parts)).toBe(expected);
  });
});

describe('assemble then split', () => {
  it.each<AddressParts>([
    us('1 Main St', 'Springfield', 'IL', '62701'),
    us('400 W Lake St', 'Chicago', 'IL', '60606-1234', 'Suite 200'),
    us('PO Box 123', 'New York', 'NY', '10001'),
    us('350 5th Ave', 'New York', 'New York', '10118', '34th Floor'),
    us('1 Main St', 'Springfield', 'IL', null),
    p({ street_1: '100 Queen St W', city: 'Toronto', state: 'ON', postal_code: 'M5H 2N2', country: 'CA' }),
    p({
      street_1: '1000 rue Sherbrooke Ouest',
      street_2: 'Unit 4',
      city: 'Montréal',
      state: 'QC',
      postal_code: 'H3A 3G4',
      country: 'CA',
    }),
    p({ street_1: '10 Downing Street', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' }),
    p({ street_1: 'Unter den Linden 77', city: 'Berlin', postal_code: '10117', country: 'DE' }),
  ])('%j', (parts) => {
    const { street_1, ...rest } = parts;
    expect(splitAddress(assembleAddress({ street: street_1, ...rest }))).toEqual(parts);
  });
});

describe('bounded work on hostile input', () => {
  interface RegexRun {
    source: string;
    /** Characters the pattern was handed (from lastIndex on for global patterns). */
    chars: number;
  }

  /** Every regular expression run while `work` runs (test, exec, replace, split and match all go through exec). */
  function regexRuns(work: () => void): RegexRun[] {
    const runs: RegexRun[] = [];
    const exec = RegExp.prototype.exec;
    const spy = vi.spyOn(RegExp.prototype, 'exec').mockImplementation(function (this: RegExp, input: string) {
      runs.push({ source: this.source, chars: input.length - (this.global || this.sticky ? this.lastIndex : 0) });
      return exec.call(this, input);
    });
    try {
      work();
    } finally {
      spy.mockRestore();
    }
    return runs;
  }

  // Shapes that made the old splitter backtrack: long blank runs (`\s*[\r\n]+\s*`), and many
  // places where "anything, then a state / postcode / unit / country" could split the line.
  const hostile: Record<string, (n: number) => string> = {
    'blank run without a line break': (n) => `1 Main St${' '.repeat(n)}x`,
    'blank run with a late line break': (n) => `a${' \t'.repeat(n / 2)}\nb`,
    'state codes without a ZIP': (n) => `${'NY '.repeat(n / 3)}1234x`,
    'state names before a ZIP': (n) => `${'New York '.repeat(n / 9)}62701`,
    'postcode halves': (n) => `${'SW1A '.repeat(n / 5)}2AA x`,
    'unit designators': (n) => `1 Main St ${'suite '.repeat(n / 6)}x, Springfield, IL 62701`,
    'country words': (n) => `${'united states of '.repeat(n / 17)}america x`,
    'street segments': (n) => `${'Unter den Linden 77, '.repeat(n / 21)}10117 Berlin`,
    'one long word': (n) => '1'.repeat(n),
  };

  it.each(Object.entries(hostile))('%s: anchored patterns over a linear amount of text', (_, make) => {
    const handed: number[] = [];
    for (const n of [20_000, 80_000]) {
      const input = make(n);
      const runs = regexRuns(() => {
        splitAddress(input);
        assembleAddress({ street: input, city: input, state: 'IL', postal_code: '62701' });
      });
      expect(runs.length).toBeGreaterThan(0);
      // Anchored at the start, and no "anything, then …" wildcard: a run can only fail fast or walk forward.
      expect(runs.filter((run) => !run.source.startsWith('^')).map((run) => run.source)).toEqual([]);
      expect(runs.filter((run) => /(?<!\\)\.[*+]/.test(run.source)).map((run) => run.source)).toEqual([]);
      const chars = runs.reduce((sum, run) => sum + run.chars, 0);
      expect(chars).toBeLessThanOrEqual(40 * input.length);
      handed.push(chars);
    }
    // Four times the input, at most a little over four times the text handed to patterns.
    expect(handed[1]!).toBeLessThanOrEqual(4.5 * handed[0]! + 1000);
  });
});
