import {
  checkWebhookUrlSyntax,
  parseIpv4,
  parseIpv6,
  refusedAddressReason,
  refusedResolution,
  urlFormProblem,
} from './url-safety';

describe('webhook address classification', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback address (IPv4-mapped)'],
    ['::ffff:7f00:1', 'loopback address (IPv4-mapped)'],
    ['::ffff:10.0.0.1', 'private address (IPv4-mapped)'],
    ['::ffff:a9fe:a9fe', 'link-local address (IPv4-mapped)'],
    ['::ffff:100.64.0.1', 'carrier-grade NAT (shared) address (IPv4-mapped)'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private address (IPv4-mapped)'],
    ['::127.0.0.1', 'loopback address (IPv4-compatible)'],
    ['64:ff9b::10.0.0.1', 'private address (NAT64)'],
    ['::ffff:0:a00:1', 'private address (IPv4-translated)'],
    ['::ffff:0:127.0.0.1', 'loopback address (IPv4-translated)'],
    ['64:ff9b:1:a00:1::', 'local-use NAT64'],
    ['192.88.99.1', '6to4 relay'],
    ['::ffff:192.88.99.1', '6to4 relay anycast address (IPv4-mapped)'],
    ['192.0.0.9', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.200', 'documentation'],
    ['::ffff:198.18.0.1', 'benchmarking address (IPv4-mapped)'],
    ['2001:db8::1', 'documentation'],
    ['3fff:fff::1', 'documentation'],
    ['100::1', 'discard-only'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2002:c0a8:101::1', '6to4'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(refusedAddressReason(address)).toContain(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '192.169.0.1',
    '223.255.255.255',
    '198.17.255.255',
    '198.20.0.1',
    '192.0.3.1',
    '203.0.114.1',
    '2001:db9::1',
    '2001:4860:4860::8888',
    '2003::1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:0:808:808',
    '192.88.98.1',
    '192.88.100.1',
    'fe7f::1',
  ])('allows the public address %s', (address) => {
    expect(refusedAddressReason(address)).toBeNull();
  });

  it('refuses anything that is not an address', () => {
    expect(refusedAddressReason('localhost')).toBe('not an IP address');
  });

  it('reads every inet_aton spelling of IPv4', () => {
    expect(parseIpv4('2130706433')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('0x7f000001')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('017700000001')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('0177.0.0.1')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('0x7f.0x0.0.1')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('127.1')).toEqual([127, 0, 0, 1]);
    expect(parseIpv4('10.1.65535')).toEqual([10, 1, 255, 255]);
    expect(parseIpv4('192.168.0.1')).toEqual([192, 168, 0, 1]);
    expect(parseIpv4('4294967296')).toBeNull();
    expect(parseIpv4('256.0.0.1')).toBeNull();
    expect(parseIpv4('08.0.0.1')).toBeNull();
    expect(parseIpv4('1.2.3.4.5')).toBeNull();
    expect(parseIpv4('example.com')).toBeNull();
  });

  it('reads IPv6 with :: and trailing IPv4', () => {
    expect(parseIpv6('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(parseIpv6('[::ffff:127.0.0.1]')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1]);
    expect(parseIpv6('fe80::1%eth0')?.slice(0, 2)).toEqual([0xfe, 0x80]);
    expect(parseIpv6('1.2.3.4')).toBeNull();
    expect(parseIpv6('not:an:address')).toBeNull();
  });
});

describe('webhook URL syntax', () => {
  const refused = (url: string, allowPrivate = false) => {
    const check = checkWebhookUrlSyntax(url, allowPrivate);
    return check.ok ? null : check.reason;
  };

  it('accepts a public https URL and keeps its host name for resolution', () => {
    const check = checkWebhookUrlSyntax('https://hooks.example.com/payments?x=1', false);
    expect(check).toMatchObject({ ok: true, host: 'hooks.example.com', isAddress: false });
  });

  it('refuses non-URLs, other schemes, credentials and long URLs', () => {
    expect(refused('not a url')).toBe('it is not a valid URL');
    expect(refused('http://hooks.example.com/')).toBe('it must use https');
    expect(refused('ftp://hooks.example.com/')).toBe('it must use https');
    expect(refused('https://user:pass@hooks.example.com/')).toBe('it must not contain a user name or password');
    expect(refused('https://user@hooks.example.com/')).toBe('it must not contain a user name or password');
    expect(refused(`https://hooks.example.com/${'a'.repeat(2030)}`)).toBe('it is longer than 2048 characters');
  });

  it.each([
    'https://127.0.0.1/',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://0x7f.1/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://10.0.0.1/',
    'https://012.0.0.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://[fe80::1]/',
    'https://[fd00::1]/',
    'https://100.64.1.1/',
    'https://0.0.0.0/',
    'https://224.0.0.1/',
  ])('refuses the address literal %s', (url) => {
    expect(refused(url)).toMatch(/^it points at /);
  });

  it('lets private addresses and http through when private URLs are allowed', () => {
    expect(refused('http://127.0.0.1:8080/hook', true)).toBeNull();
    expect(refused('https://[::1]/', true)).toBeNull();
    expect(refused('ftp://127.0.0.1/', true)).toBe('it must use https or http');
    expect(refused('http://u:p@127.0.0.1/', true)).toBe('it must not contain a user name or password');
  });

  it('refuses a resolution when any address is refused or none came back', () => {
    expect(refusedResolution('hooks.example.com', ['93.184.216.34'])).toBeNull();
    expect(refusedResolution('localhost', ['127.0.0.1'])).toBe(
      'its host localhost resolves to a loopback address (127.0.0.1)',
    );
    expect(refusedResolution('mixed.example', ['93.184.216.34', '10.0.0.1'])).toContain('a private address');
    expect(refusedResolution('nothing.example', [])).toBe('its host nothing.example does not resolve');
  });
});

describe('webhook URL form (at registration)', () => {
  it('refuses a URL that is not written as it is called', () => {
    expect(urlFormProblem(' https://hooks.example.com/')).toBe('it must not contain spaces or control characters');
    expect(urlFormProblem('https://hooks.example.com/a b')).toBe('it must not contain spaces or control characters');
    expect(urlFormProblem('https://hooks.example.com/\tx')).toBe('it must not contain spaces or control characters');
    expect(urlFormProblem('https:///hooks.example.com/')).toBe('it must start scheme://host');
    expect(urlFormProblem('https:hooks.example.com/')).toBe('it must start scheme://host');
    expect(urlFormProblem('https://hooks.example.com/#frag')).toBe('it must not have a fragment (#…)');
    expect(urlFormProblem('https://hooks.example.com/#')).toBe('it must not have a fragment (#…)');
    expect(urlFormProblem('http://127.0.0.1:0/x')).toBe('its port must be 1 to 65535');
    expect(urlFormProblem('http://127.0.0.1:00/x')).toBe('its port must be 1 to 65535');
    // Read as a slash: the host called would be hooks.example.com, not other.example.
    expect(new URL('https://hooks.example.com\\@other.example/x').host).toBe('hooks.example.com');
    expect(urlFormProblem('https://hooks.example.com\\@other.example/x')).toBe('it must not contain a backslash');
    expect(urlFormProblem('https://hooks.example.com/a\\b')).toBe('it must not contain a backslash');
  });

  it('accepts a URL written as it is called', () => {
    expect(urlFormProblem('https://hooks.example.com:8443/p?q=1')).toBeNull();
    expect(urlFormProblem('https://[::1]:8080/')).toBeNull();
    expect(urlFormProblem('HTTPS://Hooks.Example.com')).toBeNull();
  });
});
