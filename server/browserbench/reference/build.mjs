// Builds the reference page as a production single-page app is usually
// shipped: one minified JS file named by its content hash (served as
// immutable) and an index.html that names it (served with revalidation).
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

const out = "dist";
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: ["src/main.jsx"],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  entryNames: "[name]-[hash]",
  outdir: out,
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});

const js = Object.keys(result.metafile.outputs).find((f) => f.endsWith(".js"));
const html = readFileSync("src/index.html", "utf8").replace("%APP_JS%", "/ref/" + basename(js));
writeFileSync(`${out}/index.html`, html);
console.log(`reference page: ${out}/index.html, ${js} (${result.metafile.outputs[js].bytes} bytes)`);
