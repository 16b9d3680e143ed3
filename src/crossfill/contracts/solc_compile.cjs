// Runs the pinned npm solc on a standard-JSON input file and writes the output file.
// Usage: node solc_compile.cjs <node_modules> <input.json> <output.json>
const fs = require("fs");
const path = require("path");
const [nodeModules, inputPath, outputPath] = process.argv.slice(2);
const solc = require(path.join(nodeModules, "solc"));
fs.writeFileSync(outputPath, solc.compile(fs.readFileSync(inputPath, "utf8")));
