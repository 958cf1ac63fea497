// The API explorer's settings (Swagger UI, served by the same server from
// the binary: stoa_core::system::docs). Every URL here is relative to the
// page (/api/docs), so the explorer reads the document of the server it came
// from and "try it out" calls that server.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "docs/openapi.json",
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    // Swagger UI would otherwise send the document to validator.swagger.io.
    validatorUrl: null,
    docExpansion: "none",
    filter: true,
    displayRequestDuration: true,
    showExtensions: true,
    showCommonExtensions: true,
    defaultModelsExpandDepth: 0,
    // The token or key entered in "Authorize" survives a reload (this
    // browser's local storage only).
    persistAuthorization: true,
  });
});
