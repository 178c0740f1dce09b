// Keeps delivery lists current without a reload: every few seconds, fetches the region's
// fragment from the console (same origin, the session cookie) and swaps it in. When the session
// has ended the console answers 401; polling stops and an alert says so.
const intervalMs = 3000;

for (const region of document.querySelectorAll('[data-live]')) {
  const url = region.dataset.live;
  const timer = setInterval(async () => {
    // Not while hidden, and not under a keyboard user's focus (a swap would lose it).
    if (document.hidden || region.contains(document.activeElement)) return;
    let response;
    try {
      response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    } catch {
      return;
    }
    if (response.status === 401) {
      clearInterval(timer);
      const alert = document.createElement('div');
      alert.className = 'alert';
      alert.setAttribute('role', 'alert');
      alert.textContent = 'Your session has ended. Sign in again to see new deliveries.';
      region.before(alert);
      return;
    }
    if (!response.ok) return;
    const fragment = await response.text();
    if (fragment !== region.innerHTML) region.innerHTML = fragment;
  }, intervalMs);
}
