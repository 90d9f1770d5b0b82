// Saving a price profile sends the own prices as they are typed now, not as the page was
// first drawn: the fields live in the calculator's form, which HTMX never reloads.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.id !== "profile-form") return;
  form.querySelectorAll("input[data-from-page]").forEach((input) => input.remove());
  const typed = document.querySelectorAll(
    "#cost-form input[name^='price_'], #cost-form input[name^='sell_']"
  );
  typed.forEach((source) => {
    if (!source.value.trim()) return;
    const copy = document.createElement("input");
    copy.type = "hidden";
    copy.name = source.name;
    copy.value = source.value;
    copy.dataset.fromPage = "1";
    form.appendChild(copy);
  });
});
