import { describe, expect, it } from 'vitest';
import { allowsPlainHttp, blockedReason } from '../../../src/http/ssrf.js';

describe('blockedReason: IPv4 ranges, with both edges of each', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.100.100.200', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.255', 'loopback'],
    ['169.254.0.0', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['169.254.169.253', 'link_local'],
    ['169.254.255.255', 'link_local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.0', 'reserved'],
    ['192.0.0.255', 'reserved'],
    ['192.0.2.0', 'documentation'],
    ['192.0.2.255', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.0.0', 'private'],
    ['192.168.255.255', 'private'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.0', 'documentation'],
    ['198.51.100.255', 'documentation'],
    ['203.0.113.0', 'documentation'],
    ['203.0.113.255', 'documentation'],
    ['224.0.0.0', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.0', 'reserved'],
    ['255.255.255.254', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('%s → %s', (ip, reason) => {
    expect(blockedReason(ip, [])).toBe(reason);
  });

  it.each([
    '1.0.0.0',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '93.184.216.34',
  ])('%s is public', (ip) => {
    expect(blockedReason(ip, [])).toBeNull();
  });
});

describe('blockedReason: IPv6 ranges', () => {
  it.each([
    ['::', 'unspecified'],
    ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::', 'unique_local'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique_local'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::253', 'unique_local'],
    ['fe80::', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link_local'],
    ['ff00::', 'multicast'],
    ['ff02::1', 'multicast'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
    ['2001:db8::', 'documentation'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'reserved'], // Teredo
    ['fec0::1', 'reserved'], // deprecated site-local
    ['100::1', 'reserved'], // discard-only
    ['::7f00:1', 'reserved'], // deprecated IPv4-compatible ::127.0.0.1
    ['::8.8.8.8', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'], // local-use NAT64
    ['4000::1', 'reserved'], // outside 2000::/3
  ])('%s → %s', (ip, reason) => {
    expect(blockedReason(ip, [])).toBe(reason);
  });

  it.each([
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2000::',
    '3fff:1000::1',
    '2001:db7:ffff::1',
    '2001:db9::1',
    '2001:1::1',
  ])('%s is public', (ip) => {
    expect(blockedReason(ip, [])).toBeNull();
  });
});

describe('blockedReason: IPv4 embedded in IPv6 is judged as the IPv4 address', () => {
  it.each([
    ['::ffff:127.0.0.1', 'ipv4_mapped:loopback'],
    ['::ffff:7f00:1', 'ipv4_mapped:loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', 'ipv4_mapped:loopback'],
    ['::ffff:10.0.0.5', 'ipv4_mapped:private'],
    ['::ffff:a9fe:a9fe', 'ipv4_mapped:metadata'],
    ['::ffff:0.0.0.0', 'ipv4_mapped:unspecified'],
    ['64:ff9b::127.0.0.1', 'nat64:loopback'],
    ['64:ff9b::a9fe:a9fe', 'nat64:metadata'],
    ['64:ff9b::c0a8:101', 'nat64:private'],
    ['2002:7f00:1::', '6to4:loopback'],
    ['2002:a9fe:a9fe::1', '6to4:metadata'],
    ['2002:0a00:0005:1234::', '6to4:private'],
  ])('%s → %s', (ip, reason) => {
    expect(blockedReason(ip, [])).toBe(reason);
  });

  it.each(['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '2002:808:808::1'])(
    '%s reaches a public IPv4 and is allowed',
    (ip) => {
      expect(blockedReason(ip, [])).toBeNull();
    },
  );
});

describe('blockedReason: allowNets', () => {
  it('opens exactly the listed IPv4 range', () => {
    expect(blockedReason('127.0.0.1', ['127.0.0.1/32'])).toBeNull();
    expect(blockedReason('127.0.0.2', ['127.0.0.1/32'])).toBe('loopback');
    expect(blockedReason('10.1.2.3', ['10.1.0.0/16'])).toBeNull();
    expect(blockedReason('10.2.0.0', ['10.1.0.0/16'])).toBe('private');
    expect(blockedReason('172.20.0.9', ['192.168.0.0/16', '172.16.0.0/12'])).toBeNull();
  });

  it('ignores host bits in the CIDR and accepts /0', () => {
    expect(blockedReason('10.1.200.200', ['10.1.2.3/16'])).toBeNull();
    expect(blockedReason('169.254.169.254', ['0.0.0.0/0'])).toBeNull();
    expect(blockedReason('::1', ['0.0.0.0/0'])).toBe('loopback');
  });

  it('opens IPv6 ranges', () => {
    expect(blockedReason('::1', ['::1/128'])).toBeNull();
    expect(blockedReason('fd12:3456::9', ['fd12:3456::/32'])).toBeNull();
    expect(blockedReason('fd12:3457::9', ['fd12:3456::/32'])).toBe('unique_local');
  });

  it('an IPv4 allowance covers the same address spelled as IPv4-mapped IPv6', () => {
    expect(blockedReason('::ffff:127.0.0.1', ['127.0.0.1/32'])).toBeNull();
    expect(blockedReason('::ffff:127.0.0.1', ['::ffff:0:0/96'])).toBeNull();
    expect(blockedReason('::ffff:127.0.0.2', ['127.0.0.1/32'])).toBe('ipv4_mapped:loopback');
  });

  it('an IPv4 allowance does not open the IPv6 loopback', () => {
    expect(blockedReason('::1', ['127.0.0.0/8'])).toBe('loopback');
  });

  it('malformed entries allow nothing and do not throw', () => {
    for (const net of [
      '127.0.0.1',
      '127.0.0.1/33',
      '999.0.0.1/32',
      '::1/129',
      'localhost/32',
      '',
      '/8',
      '127.0.0.1/-1',
      '127.0.0.1/8/8',
    ]) {
      expect(blockedReason('127.0.0.1', [net])).toBe('loopback');
    }
  });
});

describe('blockedReason: anything that is not a plain IP address is invalid', () => {
  it.each([
    '',
    ' ',
    'localhost',
    'example.com',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '010.0.0.1',
    '127.0.0.1 ',
    ' 127.0.0.1',
    '256.0.0.1',
    '1.2.3.4.5',
    '[::1]',
    '::1::',
    '1::2::3',
    'fe80::1/64',
    '::ffff:999.0.0.1',
    'gggg::1',
    '127.0.0.1:80',
  ])('%j → invalid', (ip) => {
    expect(blockedReason(ip, ['0.0.0.0/0', '::/0'])).toBe('invalid');
  });
});

describe('allowsPlainHttp', () => {
  const allow = ['127.0.0.1/32', 'fd00:1::/64'];
  it('is true only for an IP literal inside the allow list, IPv4-mapped IPv6 included', () => {
    expect(allowsPlainHttp(new URL('http://127.0.0.1:8080/hook'), allow)).toBe(true);
    expect(allowsPlainHttp(new URL('http://[::ffff:127.0.0.1]/hook'), allow)).toBe(true);
    expect(allowsPlainHttp(new URL('http://[fd00:1::5]/hook'), allow)).toBe(true);
    expect(allowsPlainHttp(new URL('http://127.0.0.2/hook'), allow)).toBe(false);
    expect(allowsPlainHttp(new URL('http://localhost:8080/hook'), allow)).toBe(false);
    expect(allowsPlainHttp(new URL('http://127.0.0.1/hook'), [])).toBe(false);
  });
});
