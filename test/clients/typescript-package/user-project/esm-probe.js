export const probe = "an ES module";
