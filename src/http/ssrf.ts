/**
 * The SSRF guard of webhook delivery: may the worker open a connection to this IP address?
 * Pure. The HTTP client calls it on the address it is about to dial (after DNS, inside the
 * socket's lookup), so the address checked is the address connected to (docs/webhooks.md "Sources").
 *
 * The rule is a deny list of every special-purpose range an attacker could aim at (loopback,
 * private, link-local, cloud metadata, CGNAT, …), plus, for IPv6, everything outside 2000::/3:
 * IANA has allocated only that block for global unicast, so any other address is either one of
 * the special ranges or not routable at all. IPv4 embedded in IPv6 (mapped, NAT64, 6to4) is
 * judged by the IPv4 address it reaches. WEBHOOK_ALLOW_NETS opens ranges explicitly.
 */
import { isIPv4, isIPv6 } from 'node:net';

interface ParsedIp {
  family: 4 | 6;
  value: bigint;
}

interface Cidr extends ParsedIp {
  prefix: number;
}

const bitsOf = (family: 4 | 6): number => (family === 4 ? 32 : 128);

function parseIPv4(text: string): bigint | null {
  // isIPv4 rejects octal-looking, short and hex forms ("010.0.0.1", "127.1", "0x7f.0.0.1");
  // they never come from DNS, and WHATWG URL parsing already canonicalises them in URLs.
  if (!isIPv4(text)) return null;
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function parseIPv6(text: string): bigint | null {
  if (!isIPv6(text)) return null;
  let address = text;
  const zone = address.indexOf('%');
  // A zone id ("fe80::1%eth0") picks an interface, not an address; the address is what is judged.
  if (zone >= 0) address = address.slice(0, zone);
  let words: number[];
  const halves = address.split('::');
  const parseHalf = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    for (const part of half.split(':')) {
      if (part.includes('.')) {
        const v4 = parseIPv4(part);
        if (v4 === null) return null;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return null;
        out.push(parseInt(part, 16));
      }
    }
    return out;
  };
  if (halves.length === 1) {
    const all = parseHalf(halves[0]!);
    if (!all || all.length !== 8) return null;
    words = all;
  } else if (halves.length === 2) {
    const head = parseHalf(halves[0]!);
    const tail = parseHalf(halves[1]!);
    if (!head || !tail || head.length + tail.length > 7) return null;
    words = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    return null;
  }
  return words.reduce((acc, word) => (acc << 16n) | BigInt(word), 0n);
}

function parseIp(text: string): ParsedIp | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIPv6(text);
  if (v6 !== null) return { family: 6, value: v6 };
  return null;
}

/** Parses `a.b.c.d/n` or `x::y/n`; host bits are ignored. Returns null for anything else. */
function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const ip = parseIp(text.slice(0, slash).trim());
  const prefixText = text.slice(slash + 1).trim();
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > bitsOf(ip.family)) return null;
  return { ...ip, prefix };
}

function contains(net: Cidr, ip: ParsedIp): boolean {
  if (net.family !== ip.family) return false;
  const shift = BigInt(bitsOf(ip.family) - net.prefix);
  return ip.value >> shift === net.value >> shift;
}

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (!parsed) throw new Error(`bad built-in CIDR ${text}`);
  return parsed;
}

/** First match wins, so the specific entries (metadata, broadcast) come before their parents. */
const blockedV4: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr('169.254.169.254/32'), 'metadata'], // AWS, GCP, Azure, OpenStack instance metadata
  [cidr('255.255.255.255/32'), 'broadcast'],
  [cidr('0.0.0.0/8'), 'unspecified'], // "this network"; 0.0.0.0 reaches the local host on Linux
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'cgnat'], // also Alibaba's metadata at 100.100.100.200
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link_local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'reserved'], // IETF protocol assignments (Oracle metadata 192.0.0.192)
  [cidr('192.0.2.0/24'), 'documentation'],
  [cidr('192.88.99.0/24'), 'reserved'], // deprecated 6to4 relay anycast
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'benchmarking'],
  [cidr('198.51.100.0/24'), 'documentation'],
  [cidr('203.0.113.0/24'), 'documentation'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const blockedV6: ReadonlyArray<readonly [Cidr, string]> = [
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  [cidr('fd00:ec2::254/128'), 'metadata'], // AWS IMDS over IPv6
  [cidr('fc00::/7'), 'unique_local'],
  [cidr('fe80::/10'), 'link_local'],
  [cidr('ff00::/8'), 'multicast'],
  [cidr('2001:db8::/32'), 'documentation'],
  [cidr('3fff::/20'), 'documentation'], // RFC 9637
  [cidr('2001::/32'), 'reserved'], // Teredo: tunnels to an IPv4 address hidden in the bits
];

const globalUnicastV6 = cidr('2000::/3');
const mappedV6 = cidr('::ffff:0:0/96');
const nat64V6 = cidr('64:ff9b::/96');
const sixToFourV6 = cidr('2002::/16');

function embeddedV4(value: bigint): ParsedIp {
  return { family: 4, value: value & 0xffffffffn };
}

function judge(ip: ParsedIp, allow: readonly Cidr[]): string | null {
  if (allow.some((net) => contains(net, ip))) return null;
  if (ip.family === 4) return blockedV4.find(([net]) => contains(net, ip))?.[1] ?? null;
  // IPv4 reached through IPv6 is judged (and allow-listed) as the IPv4 address it reaches:
  // ::ffff:7f00:1 is 127.0.0.1 to the kernel, whatever its spelling.
  if (contains(mappedV6, ip)) return prefixed('ipv4_mapped', judge(embeddedV4(ip.value), allow));
  if (contains(nat64V6, ip)) return prefixed('nat64', judge(embeddedV4(ip.value), allow));
  if (contains(sixToFourV6, ip)) return prefixed('6to4', judge(embeddedV4(ip.value >> 80n), allow));
  const listed = blockedV6.find(([net]) => contains(net, ip))?.[1];
  if (listed) return listed;
  // Outside 2000::/3 there is no global unicast: IPv4-compatible ::a.b.c.d, site-local fec0::/10,
  // discard-only 100::/64, local-use NAT64 64:ff9b:1::/48 and unassigned space all land here.
  return contains(globalUnicastV6, ip) ? null : 'reserved';
}

function prefixed(kind: string, reason: string | null): string | null {
  return reason === null ? null : `${kind}:${reason}`;
}

/**
 * Why `ip` must not be dialled, or null when it may be. `allowNets` are CIDRs (IPv4 or IPv6,
 * WEBHOOK_ALLOW_NETS) that override the block; entries that do not parse allow nothing.
 * Anything that is not a plain IP address is refused as 'invalid'.
 */
export function blockedReason(ip: string, allowNets: readonly string[]): string | null {
  const parsed = parseIp(ip);
  if (!parsed) return 'invalid';
  return judge(parsed, parsedAllowNets(allowNets));
}

// The allow list is one array from config for the life of the process; parse it once, not per socket.
const parsedAllowLists = new WeakMap<readonly string[], readonly Cidr[]>();

function parsedAllowNets(allowNets: readonly string[]): readonly Cidr[] {
  let parsed = parsedAllowLists.get(allowNets);
  if (!parsed) {
    parsed = allowNets.map(parseCidr).filter((net): net is Cidr => net !== null);
    parsedAllowLists.set(allowNets, parsed);
  }
  return parsed;
}

/** Whether the IP literal lies in WEBHOOK_ALLOW_NETS; IPv4-mapped IPv6 counts as its IPv4 address. */
function inAllowNets(ip: string, allowNets: readonly string[]): boolean {
  const parsed = parseIp(ip);
  if (!parsed) return false;
  const candidates = contains(mappedV6, parsed) ? [parsed, embeddedV4(parsed.value)] : [parsed];
  return candidates.some((candidate) => parsedAllowNets(allowNets).some((net) => contains(net, candidate)));
}

/** http:// is accepted only to an IP literal inside WEBHOOK_ALLOW_NETS (local receivers, tests). */
export function allowsPlainHttp(url: URL, allowNets: readonly string[]): boolean {
  return inAllowNets(url.hostname.replace(/^\[|\]$/g, ''), allowNets);
}

/**
 * Why `raw` may not be registered as an outbound target (a webhook URL, a provider base URL), or
 * null: https (http only to WEBHOOK_ALLOW_NETS), no credentials, no blocked IP literal, no local
 * host name. Registration-time only; the HTTP client checks the resolved address at connect time.
 */
export function targetUrlProblem(raw: string, allowNets: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowsPlainHttp(url, allowNets)))
    return 'must be https';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const reason = parseIp(host) ? blockedReason(host, allowNets) : null;
  if (reason) return `points at a ${reason} address`;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
    return 'points at a local host name';
  return null;
}
