import { InvalidArgumentError, UnavailableError } from "../../domain/errors.js";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";
import type { JsonResultTerm, NTriplesTerm } from "./sparql-results-reader.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";
const XSD_STRING = `${XSD}string`;
const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

/**
 * Blank nodes are stored as IRIs under this prefix (skolemised). Why: Virtuoso refuses blank nodes in
 * INSERT DATA, and gives every inserted blank node a fresh internal id, so a label written twice (or in
 * two graphs) would be two nodes and `_:label` could never be looked up again. Skolem IRIs keep the
 * label, join across writes and graphs as the embedded engine does, and come back as blank nodes.
 */
export const SKOLEM_PREFIX = "urn:x-acms-blank:";

/**
 * The datatype prefix of a typed literal's exact copy in its resource's typed-literal graph
 * (`"05"^^<urn:x-acms-typed:http://www.w3.org/2001/XMLSchema#int>`). Why: Virtuoso stores typed literals
 * by value (`"05"^^xsd:int` reads back as `"5"`, `"1"^^xsd:integer` and `"true"^^xsd:boolean` on one
 * subject and predicate are one triple, `"2020"^^xsd:gYear` merges with the integer 2020), while the
 * embedded engine answers exactly what was written. A datatype Virtuoso does not know is stored verbatim,
 * so this copy keeps the lexical form and the datatype for GetTriples and Traverse.
 */
export const TYPED_PREFIX = "urn:x-acms-typed:";

/**
 * The datatype prefix of a literal stored in its resource's graph in the embedded engine's form, not as
 * Virtuoso's value (`"PT1H"^^<urn:x-acms-verbatim:http://www.w3.org/2001/XMLSchema#duration>`). Why:
 * Virtuoso refuses some literals in INSERT DATA (ill-typed ones such as `"abc"^^xsd:integer`, every
 * `xsd:duration` and `xsd:yearMonthDuration`), changes others (`"1.5"^^xsd:integer` becomes 1, `"PT1H"`
 * of `xsd:dayTimeDuration` `"PT3600S"`, an XML literal is re-serialised), while the embedded engine keeps
 * an ill-typed literal as written and answers a duration in its canonical form. Such a literal is
 * stored under a datatype Virtuoso keeps verbatim and answered with its own datatype again; its exact
 * copy still goes to the typed-literal graph, so GetTriples and Traverse answer what was written.
 */
export const VERBATIM_PREFIX = "urn:x-acms-verbatim:";

const RESERVED_PREFIXES: readonly [string, string][] = [
  [SKOLEM_PREFIX, "blank nodes"],
  [TYPED_PREFIX, "typed literals"],
  [VERBATIM_PREFIX, "typed literals"],
];

/** Virtuoso's own blank node IRIs (nodes a query makes, e.g. BNODE() or a CONSTRUCT template's `[]`). */
const VIRTUOSO_BNODE_PREFIX = "nodeID://";

const IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\u0000-\u0020<>"{}|\\^`]*$/u;
const BLANK_LABEL = /^[\p{L}\p{N}_](?:[\p{L}\p{N}_.\-\u00B7\u0300-\u036F\u203F-\u2040]*[\p{L}\p{N}_\-\u00B7\u0300-\u036F\u203F-\u2040])?$/u;
const LANGUAGE = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/;

function checkIri(value: string, field: string): string {
  if (!IRI.test(value)) throw InvalidArgumentError.field(field, `"${value.slice(0, 120)}" is not an absolute IRI`);
  for (const [prefix, what] of RESERVED_PREFIXES) {
    if (value.startsWith(prefix)) throw InvalidArgumentError.field(field, `IRIs starting with ${prefix} are reserved for ${what}`);
  }
  return value;
}

/** A blank node label from `_:label` or `label`, checked as the embedded engine checks it. */
export function blankLabel(value: string, field: string): string {
  const label = value.startsWith("_:") ? value.slice(2) : value;
  if (!BLANK_LABEL.test(label)) throw InvalidArgumentError.field(field, `"${value.slice(0, 120)}" is not a blank node label`);
  return label;
}

/** An IRI or `_:label` node (GetTriples' subject, Traverse's start), checked. */
export function nodeTerm(value: string, field: string): RdfTerm {
  if (value.startsWith("_:")) return { kind: "blank", value: blankLabel(value, field) };
  return { kind: "iri", value: checkIri(value, field) };
}

/** A checked term in the form stored: language tags lower-cased, xsd:string dropped (as the embedded engine). */
function normalise(t: RdfTerm, field: string, allowed: readonly RdfTerm["kind"][]): RdfTerm {
  if (!t || !allowed.includes(t.kind)) throw InvalidArgumentError.field(field, `must be ${allowed.join(" or ")}`);
  if (typeof t.value !== "string") throw InvalidArgumentError.field(`${field}.value`, "is required");
  if (t.kind === "iri") return { kind: "iri", value: checkIri(t.value, `${field}.value`) };
  if (t.kind === "blank") return { kind: "blank", value: blankLabel(t.value, `${field}.value`) };
  const datatype = t.datatype ?? "";
  const language = t.language ?? "";
  if (language !== "") {
    if (datatype !== "" && datatype !== RDF_LANG_STRING) {
      throw InvalidArgumentError.field(`${field}.datatype`, "a literal with a language has no datatype but rdf:langString");
    }
    if (!LANGUAGE.test(language)) throw InvalidArgumentError.field(`${field}.language`, `"${language.slice(0, 40)}" is not a language tag`);
    return { kind: "literal", value: t.value, language: language.toLowerCase() };
  }
  if (datatype === RDF_LANG_STRING) throw InvalidArgumentError.field(`${field}.language`, "rdf:langString needs a language");
  if (datatype === "" || datatype === XSD_STRING) return { kind: "literal", value: t.value };
  return { kind: "literal", value: t.value, datatype: checkIri(datatype, `${field}.datatype`) };
}

/** Checks a triple (subject IRI or blank, predicate IRI, any object) and normalises its terms. */
export function normaliseTriple(t: RdfTriple, field: string): RdfTriple {
  return {
    subject: normalise(t.subject, `${field}.subject`, ["iri", "blank"]),
    predicate: normalise(t.predicate, `${field}.predicate`, ["iri"]),
    object: normalise(t.object, `${field}.object`, ["iri", "blank", "literal"]),
  };
}

function escapeString(s: string): string {
  return s.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case "\\":
        return "\\\\";
      case '"':
        return '\\"';
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    }
  });
}

/** A normalised term in SPARQL syntax (blank nodes as their skolem IRIs). */
export function sparqlTerm(t: RdfTerm): string {
  if (t.kind === "iri") return `<${t.value}>`;
  if (t.kind === "blank") return `<${SKOLEM_PREFIX}${t.value}>`;
  const text = `"${escapeString(t.value)}"`;
  if (t.language) return `${text}@${t.language}`;
  if (t.datatype) return `${text}^^<${t.datatype}>`;
  return text;
}

/** The XSD integer types: the embedded engine answers each as xsd:integer (it keeps integers by value). */
const INTEGER_TYPES = new Set(
  [
    "integer",
    "long",
    "int",
    "short",
    "byte",
    "nonNegativeInteger",
    "positiveInteger",
    "nonPositiveInteger",
    "negativeInteger",
    "unsignedLong",
    "unsignedInt",
    "unsignedShort",
    "unsignedByte",
  ].map((t) => `${XSD}${t}`),
);
const DURATION_TYPES = new Set(["duration", "dayTimeDuration", "yearMonthDuration"].map((t) => `${XSD}${t}`));
const XML_LITERAL = "http://www.w3.org/1999/02/22-rdf-syntax-ns#XMLLiteral";
const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const DOUBLE = /^(?:[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|INF)|NaN)$/;
const DURATION = /^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * A duration in the embedded engine's canonical form (`PT60M` is `PT1H`, `P13M` `P1Y1M`, zero `PT0S`, or
 * `P0M` for xsd:yearMonthDuration), or undefined when `lexical` is not one of `datatype`.
 */
export function canonicalDuration(lexical: string, datatype: string): string | undefined {
  const m = DURATION.exec(lexical);
  if (!m || lexical.endsWith("T") || !/\d/.test(lexical)) return undefined;
  const [, minus, y, mo, d, h, mi, s] = m;
  if (datatype === `${XSD}dayTimeDuration` && (y !== undefined || mo !== undefined)) return undefined;
  if (datatype === `${XSD}yearMonthDuration` && (d !== undefined || h !== undefined || mi !== undefined || s !== undefined))
    return undefined;
  const months = BigInt(y ?? 0) * 12n + BigInt(mo ?? 0);
  const [whole, fraction = ""] = (s ?? "0").split(".");
  const frac = fraction.replace(/0+$/, "");
  const seconds = BigInt(d ?? 0) * 86400n + BigInt(h ?? 0) * 3600n + BigInt(mi ?? 0) * 60n + BigInt(whole);
  if (months === 0n && seconds === 0n && frac === "") return datatype === `${XSD}yearMonthDuration` ? "P0M" : "PT0S";
  let out = `${minus ? "-" : ""}P`;
  if (months / 12n !== 0n) out += `${months / 12n}Y`;
  if (months % 12n !== 0n) out += `${months % 12n}M`;
  if (seconds / 86400n !== 0n) out += `${seconds / 86400n}D`;
  const [hh, mm, ss] = [(seconds % 86400n) / 3600n, (seconds % 3600n) / 60n, seconds % 60n];
  if (hh !== 0n || mm !== 0n || ss !== 0n || frac !== "") {
    out += "T";
    if (hh !== 0n) out += `${hh}H`;
    if (mm !== 0n) out += `${mm}M`;
    if (ss !== 0n || frac !== "") out += `${ss}${frac === "" ? "" : `.${frac}`}S`;
  }
  return out;
}

/**
 * The form a literal Virtuoso would refuse or change is stored in (see `VERBATIM_PREFIX`): a duration
 * in canonical form, an ill-typed number or boolean and an XML literal as written; undefined for a
 * literal Virtuoso keeps by value faithfully.
 */
function verbatimForm(value: string, datatype: string): string | undefined {
  if (DURATION_TYPES.has(datatype)) return canonicalDuration(value, datatype) ?? value;
  if (datatype === XML_LITERAL) return value;
  if (INTEGER_TYPES.has(datatype)) {
    if (!/^[+-]?\d+$/.test(value)) return value;
    const n = BigInt(value);
    return n > INT64_MAX || n < -INT64_MAX - 1n ? value : undefined;
  }
  if (datatype === `${XSD}decimal`) return DECIMAL.test(value) ? undefined : value;
  if (datatype === `${XSD}double` || datatype === `${XSD}float`) return DOUBLE.test(value) ? undefined : value;
  if (datatype === `${XSD}boolean`) return /^(?:true|false|1|0)$/.test(value) ? undefined : value;
  return undefined;
}

/** A normalised object term as written into its resource's graph: `sparqlTerm`, or the verbatim form. */
export function storedTerm(t: RdfTerm): string {
  if (t.kind !== "literal" || !t.datatype) return sparqlTerm(t);
  const verbatim = verbatimForm(t.value, t.datatype);
  return verbatim === undefined
    ? sparqlTerm(t)
    : sparqlTerm({ kind: "literal", value: verbatim, datatype: `${VERBATIM_PREFIX}${t.datatype}` });
}

/**
 * The exact copy of a typed literal (one with a datatype other than xsd:string) for the typed-literal
 * graph, or undefined for any other term.
 */
export function typedCopy(t: RdfTerm): string | undefined {
  if (t.kind !== "literal" || !t.datatype) return undefined;
  return sparqlTerm({ kind: "literal", value: t.value, datatype: `${TYPED_PREFIX}${t.datatype}` });
}

/**
 * A double or float written as the embedded engine writes it: the shortest digits that read back as the
 * same number, in plain decimal notation (`1.5e-07` is `0.00000015`, `1e21` twenty-two digits), INF,
 * -INF, NaN.
 */
function canonicalDouble(lexical: string): string {
  const n = Number(lexical.replace(/^\+?INF$/, "Infinity").replace(/^-INF$/, "-Infinity"));
  if (Number.isNaN(n)) return lexical.toLowerCase() === "nan" ? "NaN" : lexical;
  if (n === Infinity) return "INF";
  if (n === -Infinity) return "-INF";
  const plain = String(n);
  if (!plain.includes("e")) return plain;
  const [mantissa, exp] = n.toExponential().split("e");
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace(/^-/, "").replace(".", "");
  const point = 1 + Number(exp);
  const body =
    point <= 0
      ? `0.${"0".repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + "0".repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${negative ? "-" : ""}${body}`;
}

/** Fractional seconds without trailing zeros, as the embedded engine writes them (`10:00:00.500` is `10:00:00.5`). */
function canonicalSeconds(lexical: string): string {
  return lexical.replace(/(:\d\d)\.(\d*?)0+(?=$|[Z+-])/, (_, sec: string, kept: string) => (kept === "" ? sec : `${sec}.${kept}`));
}

/**
 * A literal as the endpoint answered it, in the form the embedded engine answers: Virtuoso writes
 * booleans as 0/1, doubles as "1.0" or "1.5e-07", fractional seconds with trailing zeros, and keeps
 * derived integer types; these are mapped onto the canonical form Oxigraph gives ("true", "1",
 * "0.00000015", "10:00:00.5", xsd:integer), xsd:string is dropped and language tags lower-cased. A
 * verbatim or exact copy (`VERBATIM_PREFIX`, `TYPED_PREFIX`) gets its own datatype back.
 */
function literalOf(value: string, datatype: string | undefined, language: string | undefined): RdfTerm {
  if (datatype?.startsWith(TYPED_PREFIX)) return { kind: "literal", value, datatype: datatype.slice(TYPED_PREFIX.length) };
  if (datatype?.startsWith(VERBATIM_PREFIX)) return { kind: "literal", value, datatype: datatype.slice(VERBATIM_PREFIX.length) };
  if (language) return { kind: "literal", value, language: language.toLowerCase() };
  if (!datatype || datatype === XSD_STRING || datatype === RDF_LANG_STRING) return { kind: "literal", value };
  if (datatype === `${XSD}boolean`) {
    if (value === "1") return { kind: "literal", value: "true", datatype };
    if (value === "0") return { kind: "literal", value: "false", datatype };
  }
  if (datatype === `${XSD}double` || datatype === `${XSD}float`) return { kind: "literal", value: canonicalDouble(value), datatype };
  if (INTEGER_TYPES.has(datatype) && /^[+-]?\d+$/.test(value))
    return { kind: "literal", value: String(BigInt(value)), datatype: `${XSD}integer` };
  if (datatype === `${XSD}dateTime` || datatype === `${XSD}time`) return { kind: "literal", value: canonicalSeconds(value), datatype };
  return { kind: "literal", value, datatype };
}

/** A blank node label from an endpoint's own blank node id (e.g. Virtuoso's nodeID://b10006 -> b10006). */
function endpointBlank(value: string): RdfTerm {
  const raw = value.startsWith(VIRTUOSO_BNODE_PREFIX) ? value.slice(VIRTUOSO_BNODE_PREFIX.length) : value.replace(/^_:/, "");
  const label = raw.replace(/[^\p{L}\p{N}_-]/gu, "_") || "b";
  return { kind: "blank", value: label };
}

function iriOrBlank(value: string): RdfTerm {
  if (value.startsWith(SKOLEM_PREFIX)) return { kind: "blank", value: value.slice(SKOLEM_PREFIX.length) };
  if (value.startsWith(VIRTUOSO_BNODE_PREFIX)) return endpointBlank(value);
  return { kind: "iri", value };
}

/** A SPARQL JSON results term as a domain term (skolem IRIs back to blank nodes). */
export function termOfJson(t: JsonResultTerm): RdfTerm {
  switch (t.type) {
    case "uri":
      return iriOrBlank(t.value);
    case "bnode":
      return endpointBlank(t.value);
    case "literal":
    case "typed-literal":
      return literalOf(t.value, t.datatype, t["xml:lang"]);
    default:
      throw new UnavailableError(`a result holds an RDF ${String(t.type)} term, which a Term cannot carry`);
  }
}

/** An N-Triples term as a domain term (skolem IRIs back to blank nodes). */
export function termOfNTriples(t: NTriplesTerm): RdfTerm {
  if (t.kind === "iri") return iriOrBlank(t.value);
  if (t.kind === "blank") return endpointBlank(t.value);
  return literalOf(t.value, t.datatype, t.language);
}
