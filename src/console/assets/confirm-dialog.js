// Confirms a destructive action (Revoke, Delete) in the page's <dialog> instead of the
// confirmation page its button opens without JavaScript. The dialog's form posts to that page's
// address, which is where the confirmation page's own button posts too.
for (const form of document.querySelectorAll('form[data-confirm-dialog]')) {
  const dialog = document.getElementById(form.dataset.confirmDialog);
  if (!(dialog instanceof HTMLDialogElement)) continue;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    dialog.querySelector('form').action = form.action;
    dialog.querySelector('[data-confirm-text]').textContent = form.dataset.confirmText;
    dialog.showModal();
  });
}
for (const button of document.querySelectorAll('dialog [data-close]')) {
  button.addEventListener('click', () => button.closest('dialog').close());
}
