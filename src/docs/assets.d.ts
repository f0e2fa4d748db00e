// Swagger UI's files are imported as files (their path; embedded in the binary) and served from there.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
declare module "*.mmdb" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const text: string;
  export default text;
}

// Browser scripts (public/*.js, public/dashboard/*.js) are imported as text and served as they are.
declare module "*.js" {
  const text: string;
  export default text;
}

declare module "*.svg" {
  const text: string;
  export default text;
}
