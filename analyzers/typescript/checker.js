// benchsmith's original-tree compile: the diagnostics `tsc -p <config> --pretty false` prints, then the cross-file
// references the type checker resolves (analyzers/typescript/checker.py reads both).
//
//   node checker.js <typescript.js> <tsconfig.json> <job.json>
//
// job.json: {"walk": [absolute paths of the files whose identifiers are resolved], "project": [absolute paths of
// every project file a declaration may lie in], "max_per_file": n, "max_total": n}.
//
// stdout: the diagnostics exactly as tsc --pretty false formats them, then the SENTINEL line, then one JSON record
// per reference and a final {"done": ...} record.  A reference is an identifier of a walked file whose symbol
// (aliases followed) has every declaration in another project file: members reached through inferred types, names
// bound by imports, keys of object literals with a contextual project type, JSX attributes, destructured
// properties, callback parameters typed by a project signature.  Exit status: tsc's
// (0 no diagnostic, 2 diagnostics); 3 when this script itself failed.
"use strict";

const SENTINEL = "//benchsmith-checker-references";

function main(argv) {
  const ts = require(argv[0]);
  const job = JSON.parse(require("fs").readFileSync(argv[2], "utf8"));
  const host = Object.assign({}, ts.sys, { onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n")); } });
  const parsed = ts.getParsedCommandLineOfConfigFile(argv[1], {}, host);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
  });
  // the order and the gates of tsc's emitFilesAndReportErrors (noEmit: nothing is emitted)
  const all = program.getConfigFileParsingDiagnostics().slice();
  const configCount = all.length;
  all.push(...program.getSyntacticDiagnostics());
  let checked = false;
  if (all.length === configCount) {
    all.push(...program.getOptionsDiagnostics());
    all.push(...program.getGlobalDiagnostics());
    if (all.length === configCount) {
      all.push(...program.getSemanticDiagnostics());
      checked = true;
    }
  }
  const report = ts.createDiagnosticReporter(ts.sys, false);
  const diagnostics = ts.sortAndDeduplicateDiagnostics(all);
  diagnostics.forEach(report);
  const out = [SENTINEL + "\n"];
  // a tree tsc could not parse is compiled again without the broken files: resolving names now would be wasted
  const summary = checked ? walkAll(ts, program, job, out) : { files: 0, refs: 0, capped: [] };
  out.push(JSON.stringify(Object.assign({ done: true, checked }, summary)) + "\n");
  process.stdout.write(out.join(""));
  return diagnostics.length ? 2 : 0;  // tsc's status under noEmit
}

function walkAll(ts, program, job, out) {
  const checker = program.getTypeChecker();
  const project = new Set(job.project);
  const maxPerFile = job.max_per_file;
  let left = job.max_total;
  let files = 0;
  let refs = 0;
  const capped = [];
  for (const fileName of job.walk) {
    const sf = program.getSourceFile(fileName);
    if (!sf) continue;
    files++;
    const found = [];
    const limit = Math.min(maxPerFile, left);
    const visit = (node) => {
      if (found.length >= limit || skipped(ts, node)) return;
      if (node.kind === ts.SyntaxKind.Identifier) {
        const ref = reference(ts, checker, sf, node, project);
        if (ref) found.push(ref);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    if (found.length >= limit) capped.push(fileName);
    left -= found.length;
    refs += found.length;
    for (const r of found) out.push(JSON.stringify(r) + "\n");
    if (left <= 0) break;
  }
  return { files, refs, capped };
}

// import and export clauses only pass a name on; `import x = require()` likewise (`import X = NS.Y` is a use)
function skipped(ts, node) {
  const k = node.kind;
  return k === ts.SyntaxKind.ImportDeclaration || k === ts.SyntaxKind.ExportDeclaration ||
    (k === ts.SyntaxKind.ImportEqualsDeclaration && node.moduleReference.kind === ts.SyntaxKind.ExternalModuleReference);
}

function symbolOf(ts, checker, id) {
  const parent = id.parent;
  if (!ts.isDeclarationName(id) && !ts.isJsxAttribute(parent)) {
    const sym = checker.getSymbolAtLocation(id);
    return sym && (sym.flags & ts.SymbolFlags.Alias) ? checker.getAliasedSymbol(sym) : sym;
  }
  // a declaration's own name is no use, except where it also names a property or parameter of a type it gets:
  // an object literal's key or a JSX attribute (the contextual type's property: the component's props)
  if (ts.isJsxAttribute(parent) || (ts.isObjectLiteralExpression(parent.parent) &&
      (ts.isPropertyAssignment(parent) || ts.isShorthandPropertyAssignment(parent) || ts.isMethodDeclaration(parent)))) {
    const contextual = checker.getContextualType(parent.parent);
    return contextual && checker.getPropertyOfType(checker.getNonNullableType(contextual), id.text);
  }
  // `const { sourceCard } = deps`: the name is the key too, a property of the destructured value's type
  if (ts.isBindingElement(parent) && !parent.propertyName && !parent.dotDotDotToken && ts.isObjectBindingPattern(parent.parent)) {
    const type = checker.getTypeAtLocation(parent.parent);
    return type && checker.getPropertyOfType(checker.getNonNullableType(type), id.text);
  }
  if (ts.isParameter(parent) && !parent.type) return contextualParameter(ts, checker, parent);
  return undefined;
}

// an unannotated parameter of a callback typed by its context (`parts: [(engine, source, target) => {...}]`): the
// parameter of the contextual signature it stands for, when it has that parameter's name
function contextualParameter(ts, checker, param) {
  const fn = param.parent;
  if (!(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) || param.dotDotDotToken) return undefined;
  const contextual = checker.getContextualType(fn);
  const signatures = contextual ? checker.getSignaturesOfType(checker.getNonNullableType(contextual), ts.SignatureKind.Call) : [];
  if (signatures.length !== 1) return undefined;
  const index = fn.parameters.indexOf(param);
  const params = signatures[0].parameters;
  // only under the signature's own name: `(destination) =>` for `subscriber` is not completed from that API
  const found = index >= 0 && index < params.length ? params[index] : undefined;
  return found && ts.isIdentifier(param.name) && found.name === param.name.text ? found : undefined;
}

// the declarations of the symbol `id` uses, when all lie in other project files
function crossFile(ts, checker, sf, id, project) {
  const sym = symbolOf(ts, checker, id);
  const decls = sym && sym.declarations;
  if (!decls || !decls.length) return undefined;
  for (const d of decls) {
    const file = d.getSourceFile().fileName;
    // the namespace object of `import * as ns` is no API: its members are the uses
    if (file === sf.fileName || !project.has(file) || d.kind === ts.SyntaxKind.SourceFile) return undefined;
  }
  return sym;
}

// `X.m` where m is itself a project member: one reference per dotted name, at the member (as the stub diff and
// the scan place it); `api.useContext()` of a package's type keeps `api`
function memberTakesIt(ts, checker, sf, id, project) {
  const parent = id.parent;
  const member = ts.isPropertyAccessExpression(parent) && parent.expression === id ? parent.name
    : ts.isQualifiedName(parent) && parent.left === id ? parent.right : undefined;
  return member !== undefined && ts.isIdentifier(member) && crossFile(ts, checker, sf, member, project) !== undefined;
}

function reference(ts, checker, sf, id, project) {
  const sym = crossFile(ts, checker, sf, id, project);
  if (!sym || memberTakesIt(ts, checker, sf, id, project)) return undefined;
  const decls = sym.declarations;
  const decl = decls[0];
  const dsf = decl.getSourceFile();
  let whole = decl;
  // a callback's parameter stands for the parameter of a signature: that signature is what a reader needs
  if (ts.isParameter(decl)) whole = decl.parent;
  // `export const x = ...`: the statement, with its `export`, is the declaration a reader needs
  if (ts.isVariableDeclaration(decl) && decl.parent.declarations.length === 1 && ts.isVariableStatement(decl.parent.parent)) {
    whole = decl.parent.parent;
  }
  const at = sf.getLineAndCharacterOfPosition(id.getStart(sf));
  const start = dsf.getLineAndCharacterOfPosition(whole.getStart(dsf));
  const end = dsf.getLineAndCharacterOfPosition(whole.end);
  const parent = sym.parent;
  // a member is named by its class, interface, enum or namespace (type and object literals have no name)
  const owned = parent && (parent.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface | ts.SymbolFlags.Enum |
    ts.SymbolFlags.NamespaceModule));
  return {
    file: sf.fileName, line: at.line, character: at.character, name: id.text,
    owner: owned ? parent.name : id.text, decl_file: dsf.fileName,
    start: [start.line, start.character], end: [end.line, end.character],
  };
}

let status = 3;
try {
  status = main(process.argv.slice(2));
} catch (e) {
  process.stderr.write("checker.js: " + (e && e.stack ? e.stack : String(e)) + "\n");
}
process.exitCode = status;
