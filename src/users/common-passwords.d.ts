// fxa-common-password-list ships no types: one function over its embedded list.
declare module "fxa-common-password-list" {
  const list: { test(password: string): boolean };
  export default list;
}
