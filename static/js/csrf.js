// HTMX requests carry the CSRF token from this visitor's own cookie. The token is never
// written into a page, because public pages are cached and shared between visitors.
document.addEventListener("htmx:configRequest", (event) => {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match && event.detail.verb !== "get") {
    event.detail.headers["X-CSRFToken"] = decodeURIComponent(match[1]);
  }
});
// <select data-autosubmit> submits its form on change (no inline handlers: see the CSP).
document.addEventListener("change", (event) => {
  if (event.target.matches && event.target.matches("select[data-autosubmit]")) {
    event.target.form.submit();
  }
});
