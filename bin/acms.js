#!/usr/bin/env node
// `npx acms …`: runs the TypeScript CLI through tsx's ESM loader, so no build step is needed.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
