// Behaviour every page shares, as a static file (no inline scripts: the CSP forbids them).
(function () {
  // <select data-autosubmit> submits its form on change (the no-JS form has an Apply button).
  document.addEventListener("change", function (event) {
    var el = event.target;
    if (el.matches && el.matches("[data-autosubmit]") && el.form) el.form.submit();
  });

  // A form with data-confirm asks first (publishing a run shows it to everyone).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.matches && form.matches("[data-confirm]") && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });

  // <details data-fold-on-phone open>: a phone's first screen shows the answer, not twenty
  // filters; they fold away until asked for (a page opened with filters keeps them open).
  document.addEventListener("DOMContentLoaded", function () {
    if (!window.matchMedia("(max-width: 40rem)").matches || window.location.search) return;
    document.querySelectorAll("details[data-fold-on-phone]").forEach(function (fold) {
      fold.open = false;
    });
  });

  // <input data-narrows="#id">: typing narrows that <select>'s options to those holding every
  // word typed, so a list of hundreds of deployments can be searched ("mi355x fp4 sglang").
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("[data-narrows]")) return;
    var select = document.querySelector(box.dataset.narrows);
    if (!select) return;
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var first = null;
    Array.prototype.forEach.call(select.options, function (option) {
      if (!option.value) return;
      var text = option.textContent.toLowerCase();
      var shown = words.every(function (w) { return text.indexOf(w) !== -1; });
      option.hidden = !shown;
      if (shown && first === null) first = option;
    });
    if (first && select.selectedOptions.length && select.selectedOptions[0].hidden) {
      select.value = first.value;
    }
  });

  // "Compare selected" with fewer than two ticked says so here instead of loading an error.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("[data-compare-form]")) return;
    var ticked = form.querySelectorAll("input[name=d]:checked").length;
    var status = form.querySelector(".compare-status");
    if (ticked < 2) {
      event.preventDefault();
      if (status) status.textContent = ticked === 0
        ? "Tick 2 to 4 deployments in the Compare column first."
        : "Tick at least one more deployment to compare with.";
    }
  });

  // Onto the clipboard, saying so in the status element beside the button; where the
  // clipboard is refused (no HTTPS), the status says what to do instead.
  function copy(text, status, fallback) {
    function done(message) { if (status) status.textContent = message; }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { done("Copied."); },
        function () { done(fallback); }
      );
    } else {
      done(fallback);
    }
  }

  // "Copy embed code": an <iframe> for the chart's /embed/ URL (shown when it cannot be copied).
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".copy-embed");
    if (!button) return;
    var url = new URL(button.dataset.embed, window.location.href).href;
    var code = '<iframe src="' + url + '" width="720" height="460" style="border:0" ' +
      'title="inferboard chart" loading="lazy"></iframe>';
    copy(code, button.parentNode.querySelector(".copy-status"), code);
  });

  // "Copy" beside a token or a command: the text of the element data-copy names.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".copy-text");
    var source = button && document.querySelector(button.dataset.copy);
    if (!source) return;
    copy(source.textContent.trim(), button.parentNode.querySelector(".copy-status"),
      "Select the text and copy it by hand.");
  });

  // "PNG" beside a claim's verdict card: the server draws the SVG; the browser rasterises it
  // at 1200×630 (what link previews use) and downloads it.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".claim-png");
    if (!button) return;
    var status = button.parentNode.querySelector(".copy-status");
    fetch(button.dataset.src).then(function (response) {
      if (!response.ok) throw new Error("no verdict to draw");
      return response.blob();
    }).then(function (svg) {
      var url = URL.createObjectURL(svg);
      var image = new Image();
      image.onload = function () {
        var canvas = document.createElement("canvas");
        canvas.width = 1200; canvas.height = 630;
        canvas.getContext("2d").drawImage(image, 0, 0, 1200, 630);
        URL.revokeObjectURL(url);
        canvas.toBlob(function (png) {
          var link = document.createElement("a");
          link.href = URL.createObjectURL(png);
          link.download = "claim-verdict.png";
          document.body.appendChild(link);
          link.click();
          link.remove();
        }, "image/png");
      };
      image.src = url;
    }).catch(function (error) { if (status) status.textContent = String(error.message || error); });
  });

  // A region that scrolls sideways must be reachable by keyboard (WCAG 2.1.1).
  function focusableScrollers(root) {
    root.querySelectorAll(".table-wrap, table.data, pre").forEach(function (el) {
      if (el.scrollWidth > el.clientWidth + 1 && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () { focusableScrollers(document); });
  document.addEventListener("htmx:afterSettle", function (e) { focusableScrollers(e.detail.elt || document); });
})();
