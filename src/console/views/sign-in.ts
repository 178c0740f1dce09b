import { html } from '../html.js';
import { alertBox, barePage } from './layout.js';

export function signInPage(options: { email: string; error: string | null }): string {
  return barePage(
    'Sign in',
    html`<p class="lead">
        The developer console of your company's fleet: vehicles, API keys, webhooks, monitoring and usage.
      </p>
      ${alertBox(options.error)}
      <form method="post" action="/console/sign-in" class="stack">
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          maxlength="254"
          value="${options.email}"
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          maxlength="1024"
        />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">No account? Your operator creates one with <code>fleetctl user add</code>.</p>`,
  );
}
