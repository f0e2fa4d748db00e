// The share image's WebAssembly and font are imported as files (their path; embedded in the binary) and read from there.
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.ttf" {
  const path: string;
  export default path;
}
