/**
 * Flat one-line address ↔ parts, for the webhook service_location (docs/webhooks.md "service_location").
 * The split is conservative: a part is filled only when the line follows a format we recognise (US, CA,
 * GB, DE) and the part sits where that format puts it; everything else stays null, never guessed.
 *
 * Decisions for ambiguous input:
 * - A locality is needed: without a recognised "state ZIP", "province postal", UK postcode or
 *   "postcode city" segment nothing is placed (a stated country alone still fills country).
 * - "Street, City, IL" without a ZIP is not split unless the country is stated: most US state codes are
 *   also country codes (IL Israel, IN India, DE Germany, CA Canada...).
 * - "NNNNN City" (DE, but equally FR, IT, ES, FI) gives postal_code and city only when the country is
 *   stated as Germany or the preceding segment is a name-then-number street ("Unter den Linden 77");
 *   country stays null unless stated. A bare "10117 Berlin" is not split: it reads just as well as a US
 *   street line ("12345 W Olympic Blvd").
 * - The city is the segment right before the locality; when that segment is not a plain name (it has
 *   digits, e.g. "1 Main St Springfield") neither city nor street is placed, as the boundary is unknown.
 * - UK: a city in its own segment before the postcode counts only when every earlier segment is placed
 *   (otherwise it may be a county or a dependent locality).
 * - Codes are matched case-insensitively but every part keeps the casing it was written in.
 *
 * Work is linear in the input: blanks are normalised in one pass, and every pattern is anchored
 * at both ends and applied to a segment or to a few words at its end (a state, a postcode, a
 * unit), never as "anything, then a pattern" over the whole line, which backtracks.
 */

export interface AddressParts {
  street_1: string | null;
  street_2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-2. */
  country: string | null;
}

const emptyParts: AddressParts = {
  street_1: null,
  street_2: null,
  city: null,
  state: null,
  postal_code: null,
  country: null,
};

const usStates: Record<string, string> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
};

/** Territories use US ZIPs and state codes but have their own ISO country code. */
const usTerritories: Record<string, string> = {
  PR: 'Puerto Rico',
  GU: 'Guam',
  VI: 'Virgin Islands',
  AS: 'American Samoa',
  MP: 'Northern Mariana Islands',
};

const caProvinces: Record<string, string> = {
  AB: 'Alberta',
  BC: 'British Columbia',
  MB: 'Manitoba',
  NB: 'New Brunswick',
  NL: 'Newfoundland and Labrador',
  NS: 'Nova Scotia',
  NT: 'Northwest Territories',
  NU: 'Nunavut',
  ON: 'Ontario',
  PE: 'Prince Edward Island',
  QC: 'Quebec',
  SK: 'Saskatchewan',
  YT: 'Yukon',
};

/** Country names and codes that can only mean one country, keyed lower case without dots. */
const countryNames: Record<string, string> = {
  us: 'US',
  usa: 'US',
  'united states': 'US',
  'united states of america': 'US',
  canada: 'CA',
  uk: 'GB',
  gb: 'GB',
  gbr: 'GB',
  'united kingdom': 'GB',
  'great britain': 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  'northern ireland': 'GB',
  germany: 'DE',
  deutschland: 'DE',
  deu: 'DE',
  'federal republic of germany': 'DE',
  'bundesrepublik deutschland': 'DE',
};

/** Also US state codes (California, Delaware): a country only when the locality before it agrees. */
const ambiguousCountryCodes: Record<string, string> = { ca: 'CA', de: 'DE' };

/** A country written at the end of the locality segment, without a comma ("Chicago, IL 60606 USA"). */
const trailingCountry =
  /^(?:u\.?s\.?a?\.?|united states(?: of america)?|canada|u\.?k\.?|united kingdom|great britain|germany|deutschland)$/i;
/** Words in the longest trailing country name ("united states of america"). */
const trailingCountryWords = 4;

function alternation(codes: Record<string, string>): string {
  const words = [...Object.keys(codes), ...Object.values(codes)].sort((a, b) => b.length - a.length);
  return words.map((w) => w.replace(/\./g, '\\.').replace(/ /g, '\\s+')).join('|');
}

const usState = alternation({ ...usStates, ...usTerritories });
const caProvince = alternation({ ...caProvinces, QC: 'Québec' });
const zip = '\\d{5}(?:-\\d{4})?';
const caPostal = '[ABCEGHJ-NPRSTVXY]\\d[ABCEGHJ-NPRSTV-Z] ?\\d[ABCEGHJ-NPRSTV-Z]\\d';
const ukPostcode = '[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}';

const usStateZip = new RegExp(`^(${usState})\\s+(${zip})$`, 'i');
const usStateOnly = new RegExp(`^(${usState})$`, 'i');
const zipOnly = new RegExp(`^${zip}$`);
const caProvincePostal = new RegExp(`^(${caProvince})\\s+(${caPostal})$`, 'i');
const caProvinceOnly = new RegExp(`^(${caProvince})$`, 'i');
const caPostalOnly = new RegExp(`^${caPostal}$`, 'i');
const ukPostcodeOnly = new RegExp(`^(${ukPostcode})$`, 'i');
const usStateWords = mostWords(Object.values({ ...usStates, ...usTerritories }));
const caProvinceWords = mostWords(Object.values(caProvinces));
const dePostcode = /^\d{5}$/;
/** A postcode alone in the last segment belongs to the state or city before it ("IL, 62701"). */
const barePostal = new RegExp(`^(?:${zip}|${caPostal})$`, 'i');

const unitDesignator =
  'suite|ste|unit|apt|apartment|floor|flr|fl|level|bldg|building|room|rm|dept|department|hangar|hngr|lot|office|ofc|' +
  'space|spc|trailer|trlr|flat|pmb|bay|dock';
/** The unit id holds a digit or is a single letter, so "1 Bay Street" is not "Bay S…". */
const unitId = '(?:[A-Z]?\\d[\\w-]*|[A-Z])';
const unit = `(?:(?:${unitDesignator})\\.?\\s*#?\\s*${unitId}|#\\s*${unitId}|\\d+(?:st|nd|rd|th)\\s+(?:floor|flr|fl)\\.?)`;
const unitSegment = new RegExp(`^${unit}$`, 'i');
/** Words in the longest unit ("Suite # 200"). */
const unitWords = 3;

const poBox =
  /^(?:p\.?\s?o\.?\s?box|post\s+office\s+box|postfach)\s*#?\s*\d[\w-]*$|^(?:rr|rural\s+route|hc)\s*\d+\s+box\s+\d+$/i;
/** "1 Main St", "12B Oak Ave", "12-34 56th Ave", "123 1/2 Elm St". */
const numberFirstStreet = /^\d+[A-Z]?(?:[-/]\d+[A-Z]?)?\s+\S/i;
/** "Unter den Linden 77", "Hauptstr. 5a", "Am Markt 1-3". */
const numberLastStreet = /^\p{L}[\p{L}\p{M}.'’ -]*\s\d+\s?[a-z]?(?:\s?[-/]\s?\d+\s?[a-z]?)?$/iu;
/** Names only: letters, spaces and the punctuation of "St. John's", "Winston-Salem", "Montréal". */
const cityName = /^\p{L}[\p{L}\p{M} .'’&()-]*$/u;

type StreetStyle = 'number-first' | 'number-last';

/**
 * A segment split before its last k words, trying each k of `counts` in order: the first tail
 * that `fits` wins, and the head must keep at least one word. Segments have single spaces.
 */
function splitTail(
  segment: string,
  counts: readonly number[],
  fits: (tail: string) => boolean,
): { head: string; tail: string } | null {
  const words = segment.split(' ');
  for (const count of counts) {
    if (count >= words.length) continue;
    const tail = words.slice(-count).join(' ');
    if (fits(tail)) return { head: words.slice(0, -count).join(' '), tail };
  }
  return null;
}

/** How many words the longest name of `names` has. */
function mostWords(names: readonly string[]): number {
  return Math.max(...names.map((name) => name.split(' ').length));
}

/**
 * "City Region Code" in one segment, read as `^(.+?)\s+(region)\s+(code)$` would read it (the
 * shortest city, so the longest region) without its backtracking: the code is the last word or
 * two, the region the longest run of words before it that `region` matches.
 */
function cityRegionCode(
  segment: string,
  code: RegExp,
  region: RegExp,
  regionWords: number,
): { city: string; region: string; code: string } | null {
  for (const codeWords of [2, 1]) {
    const split = splitTail(segment, [codeWords], (tail) => code.test(tail));
    if (!split) continue;
    const counts = Array.from({ length: regionWords }, (_, i) => regionWords - i);
    const place = splitTail(split.head, counts, (tail) => region.test(tail));
    if (place) return { city: place.head, region: place.tail, code: split.tail };
  }
  return null;
}

function isUnit(text: string): boolean {
  return unitSegment.test(text);
}

function isStreet(text: string, style: StreetStyle): boolean {
  if (poBox.test(text)) return true;
  return style === 'number-first' ? numberFirstStreet.test(text) : numberLastStreet.test(text);
}

function isCity(text: string): boolean {
  // Five words covers "Truth or Consequences"; longer is a sentence, not a place name.
  return cityName.test(text) && text.split(' ').length <= 5 && !isUnit(text);
}

interface Street {
  street_1: string | null;
  street_2: string | null;
  /** Every segment found a place (nothing was left over that might be a county or a name). */
  clean: boolean;
}

/** Exactly one street-shaped segment is street_1; unit segments (and a trailing inline unit) are street_2. */
function placeStreet(segments: string[], style: StreetStyle): Street {
  if (segments.length === 0) return { street_1: null, street_2: null, clean: true };
  const units: string[] = [];
  const streets: string[] = [];
  let leftOver = 0;
  for (const segment of segments) {
    if (isUnit(segment)) units.push(segment);
    else if (isStreet(segment, style)) streets.push(segment);
    else leftOver += 1;
  }
  const [street] = streets;
  if (streets.length !== 1 || street === undefined) return { street_1: null, street_2: null, clean: false };
  let street1 = street;
  if (style === 'number-first' && !poBox.test(street)) {
    // The shortest unit at the end: "anything, then a unit" read from the right.
    const inline = splitTail(street, [1, 2, unitWords], isUnit);
    if (inline && numberFirstStreet.test(inline.head)) {
      street1 = inline.head;
      units.unshift(inline.tail);
    }
  }
  return { street_1: street1, street_2: units.length > 0 ? units.join(', ') : null, clean: leftOver === 0 };
}

interface Locality {
  city: string | null;
  state: string | null;
  postal_code: string | null;
  country: string | null;
  /** The segments before the locality that hold the street; null when the street/city boundary is unknown. */
  streetSegments: string[] | null;
  style: StreetStyle;
  /** The city is only trusted when the street segments leave nothing over (UK county lines). */
  cityNeedsCleanStreet: boolean;
}

function upperCode(text: string, codes: Record<string, string>): string | null {
  // Blanks are single spaces by now (normalizeBlanks).
  const lower = text.toLowerCase();
  for (const [code, name] of Object.entries(codes)) {
    if (code.toLowerCase() === lower || name.toLowerCase() === lower) return code;
  }
  return null;
}

/** The segment before the locality is the city when it is a plain name; the rest is the street. */
function cityBefore(before: string[]): { city: string | null; streetSegments: string[] | null } {
  const previous = before.at(-1);
  if (previous === undefined) return { city: null, streetSegments: [] };
  return isCity(previous)
    ? { city: previous, streetSegments: before.slice(0, -1) }
    : { city: null, streetSegments: null };
}

function usCountry(state: string): string {
  return upperCode(state, usTerritories) ?? 'US';
}

function northAmerican(segments: string[], stated: string | null): Locality | null {
  const last = segments.at(-1) ?? '';
  const before = segments.slice(0, -1);
  const shape = { style: 'number-first' as const, cityNeedsCleanStreet: false };
  let m = usStateZip.exec(last);
  if (m?.[1] && m[2])
    return { ...cityBefore(before), state: m[1], postal_code: m[2], country: usCountry(m[1]), ...shape };
  const us = cityRegionCode(last, zipOnly, usStateOnly, usStateWords);
  if (us) {
    const city = isCity(us.city) ? us.city : null;
    return {
      city,
      streetSegments: city ? before : null,
      state: us.region,
      postal_code: us.code,
      country: usCountry(us.region),
      ...shape,
    };
  }
  m = caProvincePostal.exec(last);
  if (m?.[1] && m[2]) return { ...cityBefore(before), state: m[1], postal_code: m[2], country: 'CA', ...shape };
  const ca = cityRegionCode(last, caPostalOnly, caProvinceOnly, caProvinceWords);
  if (ca) {
    const city = isCity(ca.city) ? ca.city : null;
    return {
      city,
      streetSegments: city ? before : null,
      state: ca.region,
      postal_code: ca.code,
      country: 'CA',
      ...shape,
    };
  }
  // Without a postal code the state code is only trusted when the country says which list it is from.
  const stateOnly =
    stated === 'US' ? usStateOnly.exec(last)?.[1] : stated === 'CA' ? caProvinceOnly.exec(last)?.[1] : undefined;
  if (stateOnly === undefined) return null;
  return {
    ...cityBefore(before),
    state: stateOnly,
    postal_code: null,
    country: stated === 'US' ? usCountry(stateOnly) : 'CA',
    ...shape,
  };
}

function ukCountry(postcode: string): string {
  // Crown dependencies have UK-format postcodes but their own ISO codes.
  const area = postcode.slice(0, 2).toUpperCase();
  return area === 'JE' ? 'JE' : area === 'GY' ? 'GG' : area === 'IM' ? 'IM' : 'GB';
}

function british(segments: string[]): Locality | null {
  const last = segments.at(-1) ?? '';
  const before = segments.slice(0, -1);
  const shape = { style: 'number-first' as const, state: null };
  const alone = ukPostcodeOnly.exec(last)?.[1];
  if (alone)
    return {
      ...cityBefore(before),
      postal_code: alone,
      country: ukCountry(alone),
      cityNeedsCleanStreet: true,
      ...shape,
    };
  // "City POSTCODE": the postcode is the last word or two, the city everything before it.
  const split = splitTail(last, [2, 1], (tail) => ukPostcodeOnly.test(tail));
  if (split) {
    const city = isCity(split.head) ? split.head : null;
    return {
      city,
      streetSegments: city ? before : null,
      postal_code: split.tail,
      country: ukCountry(split.tail),
      cityNeedsCleanStreet: false,
      ...shape,
    };
  }
  return null;
}

function german(segments: string[], stated: string | null): Locality | null {
  // "NNNNN City": five digits, then the rest of the segment.
  const last = segments.at(-1) ?? '';
  const space = last.indexOf(' ');
  const postcode = last.slice(0, space);
  const city = last.slice(space + 1);
  if (space < 0 || !dePostcode.test(postcode) || !isCity(city)) return null;
  const before = segments.slice(0, -1);
  // Unstated, "NNNNN Name" is only a locality after a name-then-number street (see the header).
  if (stated !== 'DE' && placeStreet(before, 'number-last').street_1 === null) return null;
  return {
    city,
    state: null,
    postal_code: postcode,
    country: stated === 'DE' ? 'DE' : null,
    streetSegments: before,
    style: 'number-last',
    cityNeedsCleanStreet: false,
  };
}

function locality(segments: string[], stated: string | null): Locality | null {
  return northAmerican(segments, stated) ?? british(segments) ?? german(segments, stated);
}

function compatible(stated: string | null, found: string | null): boolean {
  if (stated === null || found === null || stated === found) return true;
  if (stated === 'US') return found in usTerritories;
  if (stated === 'GB') return found === 'JE' || found === 'GG' || found === 'IM';
  return false;
}

function parts(segments: string[], stated: string | null): AddressParts | null {
  if (segments.length === 0) return stated ? { ...emptyParts, country: stated } : null;
  const found = locality(segments, stated);
  if (!found) return null;
  // A stated country that contradicts the format means the line is not what it seems.
  if (!compatible(stated, found.country)) return { ...emptyParts };
  const street = found.streetSegments
    ? placeStreet(found.streetSegments, found.style)
    : { street_1: null, street_2: null, clean: false };
  return {
    street_1: street.street_1,
    street_2: street.street_2,
    city: found.cityNeedsCleanStreet && !street.clean ? null : found.city,
    state: found.state,
    postal_code: found.postal_code,
    country: found.country ?? stated,
  };
}

function countryKey(text: string): string {
  return text.toLowerCase().replaceAll('.', '').split(' ').filter(Boolean).join(' ');
}

/** Join a bare postcode segment to the one before it ("Springfield, IL, 62701" → "IL 62701"). */
function mergeBarePostal(segments: string[]): string[] {
  const last = segments.at(-1);
  if (segments.length < 2 || last === undefined || !barePostal.test(last)) return segments;
  return [...segments.slice(0, -2), `${segments.at(-2)} ${last}`];
}

/**
 * Runs of blanks become one space, or `lineBreak` when they hold a line break; the ends are
 * trimmed. One pass over the text.
 */
function normalizeBlanks(display: string, lineBreak: string): string {
  const chunks: string[] = [];
  const separator = (hasBreak: boolean) => (hasBreak ? lineBreak : ' ');
  let start = 0;
  let inBlank = false;
  let hasBreak = false;
  for (let i = 0; i < display.length; i++) {
    const char = display[i]!;
    // trim() removes exactly what \s matches: a character it empties is a blank.
    if (char.trim() === '') {
      if (!inBlank) chunks.push(display.slice(start, i));
      inBlank = true;
      hasBreak ||= char === '\r' || char === '\n';
    } else if (inBlank) {
      chunks.push(separator(hasBreak));
      inBlank = hasBreak = false;
      start = i;
    }
  }
  chunks.push(inBlank ? separator(hasBreak) : display.slice(start));
  return chunks.join('').trim();
}

export function splitAddress(display: string | null): AddressParts {
  if (display === null) return { ...emptyParts };
  // Line breaks separate address lines the way commas do.
  const text = normalizeBlanks(display, ', ');
  const segments = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const last = segments.at(-1);
  if (last === undefined) return { ...emptyParts };

  const key = countryKey(last);
  const named = countryNames[key];
  if (named) return parts(mergeBarePostal(segments.slice(0, -1)), named) ?? { ...emptyParts, country: named };

  const ambiguous = ambiguousCountryCodes[key];
  if (ambiguous) {
    // "…, 10117 Berlin, DE" is Germany; "…, Dover, DE" is Delaware without a ZIP (not split).
    const asCountry = parts(mergeBarePostal(segments.slice(0, -1)), ambiguous);
    if (asCountry && asCountry.country === ambiguous) return asCountry;
  }

  const suffix = splitTail(last, [1, 2, 3, trailingCountryWords], (tail) => trailingCountry.test(tail));
  const suffixCountry = suffix ? countryNames[countryKey(suffix.tail)] : undefined;
  if (suffix && suffixCountry) {
    const withSuffix = parts([...segments.slice(0, -1), suffix.head], suffixCountry);
    if (withSuffix) return withSuffix;
  }

  return parts(mergeBarePostal(segments), null) ?? { ...emptyParts };
}

function join(parts: Array<string | null>, separator: string): string | null {
  const present = parts.filter((p): p is string => p !== null);
  return present.length > 0 ? present.join(separator) : null;
}

function clean(text: string | null | undefined): string | null {
  const trimmed = text ? normalizeBlanks(text, ' ') : '';
  return trimmed ? trimmed : null;
}

/**
 * The display line for structured-only records: "1 Main St, Suite 200, Springfield, IL 62701".
 * US style ("City, ST 12345"); DE puts the postcode first ("10117 Berlin"). The country is appended only
 * when the line does not already say it (a US ZIP or a CA/UK postcode does).
 */
export function assembleAddress(parts: {
  street?: string | null;
  street_2?: string | null;
  city?: string | null;
  state?: string | null;
  postal_code?: string | null;
  country?: string | null;
}): string | null {
  const street = clean(parts.street);
  const street2 = clean(parts.street_2);
  const city = clean(parts.city);
  const state = clean(parts.state);
  const postal = clean(parts.postal_code);
  const country = clean(parts.country);

  const locality =
    country?.toUpperCase() === 'DE'
      ? join([join([postal, city], ' '), state], ', ')
      : state === null
        ? join([city, postal], ' ') // "London SW1A 2AA"
        : join([city, join([state, postal], ' ')], ', ');

  const base = join([street, street2, locality], ', ') ?? '';
  if (country === null) return base || null;
  if (base === '') return country;
  return splitAddress(base).country === country.toUpperCase() ? base : `${base}, ${country}`;
}
