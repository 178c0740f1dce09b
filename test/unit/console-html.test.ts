import { describe, expect, it } from 'vitest';
import { html } from '../../src/console/html.js';
import { hashPassword, verifyPassword } from '../../src/security/passwords.js';

describe('console html', () => {
  it('escapes every interpolated value, attribute quotes included, and nests Html unescaped', () => {
    const name = `<script>alert("x")</script>' onmouseover='x`;
    const inner = html`<b>${name}</b>`;
    expect(html`<p title="${name}">${inner}</p>`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x">' +
        '<b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x</b></p>',
    );
  });

  it('renders arrays joined and null, undefined and false as nothing; numbers as text', () => {
    expect(html`${[html`<i>a</i>`, '&']}|${null}|${undefined}|${false}|${0}`.text).toBe('<i>a</i>&amp;||||0');
  });
});

describe('passwords', () => {
  it('verifies the right password only, with a fresh salt each time', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterz', a)).toBe(false);
    expect(await verifyPassword('correct horse battery', 'bcrypt$whatever')).toBe(false);
  });
});
