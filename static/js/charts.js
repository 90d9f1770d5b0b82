// Renders every [data-figure] element from the JSON figure next to it, on load and after
// each HTMX swap, and makes points with a URL in customdata clickable.
(function () {
  function render(root) {
    if (!window.Plotly) return;
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source) return;
      var figure = JSON.parse(source.textContent);
      // The title is the <figcaption> above the chart: inside the plot it collides with the
      // legend on a phone.
      figure.layout.title = { text: "" };
      figure.layout.margin = Object.assign({}, figure.layout.margin, { t: 30 });
      // No mode bar: its icon links have no accessible names, and the data table under
      // each chart is the way to read exact values.
      Plotly.react(el, figure.data, figure.layout, {
        responsive: true,
        displaylogo: false,
        displayModeBar: false,
      });
      if (!el.dataset.clickBound) {
        el.dataset.clickBound = "1";
        el.on("plotly_click", function (event) {
          var url = event.points && event.points[0] && event.points[0].customdata;
          if (typeof url === "string" && url.charAt(0) === "/") window.location.href = url;
        });
      }
    });
  }
  // "Download as PNG / SVG" under each chart: Plotly draws the image from the figure itself,
  // at the size it has on the page (PNG at twice the pixels, for slides).
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".chart-download");
    if (!button || !window.Plotly) return;
    var el = document.getElementById(button.dataset.chart);
    if (!el || !el.data) return;
    Plotly.downloadImage(el, {
      format: button.dataset.format,
      filename: button.dataset.filename || "chart",
      width: el.clientWidth || 900,
      height: el.clientHeight || 500,
      scale: button.dataset.format === "png" ? 2 : 1,
    });
  });
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSettle", function (event) { render(event.detail.elt || document); });
})();
