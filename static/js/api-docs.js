// django-ninja's Swagger UI start-up, with deep links off: a deep link puts a link inside each
// operation's toggle button (nested interactive controls, too small a target for WCAG 2.2).
(function () {
  var csrf = document.querySelector("body").dataset;
  var config = JSON.parse(document.getElementById("swagger-settings").textContent);
  config.dom_id = "#swagger-ui";
  config.deepLinking = false;
  config.presets = [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset];
  if (csrf.apiCsrf && csrf.csrfToken) {
    config.requestInterceptor = function (req) {
      req.headers["X-CSRFToken"] = csrf.csrfToken;
      return req;
    };
  }
  SwaggerUIBundle(config);
})();
