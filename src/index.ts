export * from "../clients/typescript/src/index.js";
