// Confirms a revocation in the page's <dialog> instead of the confirmation page the Revoke
// button opens without JavaScript. The dialog's form posts to the same address.
const dialog = document.getElementById('revoke-dialog');

if (dialog instanceof HTMLDialogElement) {
  const confirmForm = dialog.querySelector('form');
  const what = document.getElementById('revoke-what');
  for (const form of document.querySelectorAll('form[data-revoke-label]')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      confirmForm.action = form.action;
      what.textContent = `Calls made with ${form.dataset.revokeLabel} will be refused with 401 from now on. This cannot be undone.`;
      dialog.showModal();
    });
  }
  dialog.querySelector('[data-close]').addEventListener('click', () => dialog.close());
}
