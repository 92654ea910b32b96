// Swagger UI over the API's OpenAPI document (/docs); a file, not an inline script, so
// the page keeps the workbench's script-src 'self'.
window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({ url: root.dataset.url, dom_id: "#swagger-ui" });
});
