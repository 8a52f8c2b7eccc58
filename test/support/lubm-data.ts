import type { RdfTerm, RdfTriple } from "../../src/domain/rdf-term.js";
import { prng } from "./prng.js";

/** The LUBM univ-bench ontology namespace. */
export const UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
const RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/** LUBM query 1: graduate students taking one course (no inference needed). */
export const LUBM_Q1 = `PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX ub: <${UB}>
SELECT ?X WHERE { ?X rdf:type ub:GraduateStudent . ?X ub:takesCourse <http://www.Department0.University0.edu/GraduateCourse0> }`;

/** LUBM query 14: every undergraduate student. */
export const LUBM_Q14 = `PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX ub: <${UB}>
SELECT ?X WHERE { ?X rdf:type ub:UndergraduateStudent }`;

/** One university's triples, and what Q1 and Q14 must answer over it. */
export interface LubmUniversity {
  triples: RdfTriple[];
  q1: number;
  q14: number;
}

const iri = (value: string): RdfTerm => ({ kind: "iri", value });
const lit = (value: string): RdfTerm => ({ kind: "literal", value });

/**
 * A small LUBM-like university (the univ-bench shapes: departments, faculty, graduate and undergraduate
 * students, courses, advisors, publications, names and e-mail literals), drawn deterministically from
 * `seed`. It stands in for the LUBM generator (not on npm); Q1 and Q14 need no inference, so their
 * expected counts come straight from the generator.
 */
export function lubmUniversity(index: number, seed: number, departments = 3): LubmUniversity {
  const rnd = prng(seed);
  const pick = (n: number) => Math.floor(rnd() * n);
  const triples: RdfTriple[] = [];
  const add = (s: string, p: string, o: RdfTerm) => triples.push({ subject: iri(s), predicate: iri(p), object: o });
  const u = `http://www.University${index}.edu`;
  add(u, RDF_TYPE, iri(`${UB}University`));
  add(u, `${UB}name`, lit(`University${index}`));
  let q1 = 0;
  let q14 = 0;
  for (let d = 0; d < departments; d++) {
    const dept = `http://www.Department${d}.University${index}.edu`;
    add(dept, RDF_TYPE, iri(`${UB}Department`));
    add(dept, `${UB}subOrganizationOf`, iri(u));
    const faculty = Array.from({ length: 4 + pick(4) }, (_, f) => `${dept}/FullProfessor${f}`);
    const courses = Array.from({ length: 6 }, (_, c) => `${dept}/Course${c}`);
    const gradCourses = Array.from({ length: 4 }, (_, c) => `${dept}/GraduateCourse${c}`);
    for (const c of courses) add(c, RDF_TYPE, iri(`${UB}Course`));
    for (const c of gradCourses) add(c, RDF_TYPE, iri(`${UB}GraduateCourse`));
    faculty.forEach((f, i) => {
      add(f, RDF_TYPE, iri(`${UB}FullProfessor`));
      add(f, `${UB}worksFor`, iri(dept));
      add(f, `${UB}name`, lit(`FullProfessor${i}`));
      add(f, `${UB}emailAddress`, lit(`FullProfessor${i}@Department${d}.University${index}.edu`));
      add(f, `${UB}teacherOf`, iri(courses[i % courses.length]));
      add(`${f}/Publication0`, RDF_TYPE, iri(`${UB}Publication`));
      add(`${f}/Publication0`, `${UB}publicationAuthor`, iri(f));
    });
    const undergrads = 10 + pick(10);
    for (let s = 0; s < undergrads; s++) {
      const st = `${dept}/UndergraduateStudent${s}`;
      add(st, RDF_TYPE, iri(`${UB}UndergraduateStudent`));
      add(st, `${UB}memberOf`, iri(dept));
      add(st, `${UB}name`, lit(`UndergraduateStudent${s}`));
      add(st, `${UB}takesCourse`, iri(courses[pick(courses.length)]));
      if (rnd() < 0.2) add(st, `${UB}advisor`, iri(faculty[pick(faculty.length)]));
      q14 += 1;
    }
    const grads = 4 + pick(6);
    for (let s = 0; s < grads; s++) {
      const st = `${dept}/GraduateStudent${s}`;
      add(st, RDF_TYPE, iri(`${UB}GraduateStudent`));
      add(st, `${UB}memberOf`, iri(dept));
      add(st, `${UB}advisor`, iri(faculty[pick(faculty.length)]));
      const taken = new Set([pick(gradCourses.length), pick(gradCourses.length)]);
      for (const c of taken) add(st, `${UB}takesCourse`, iri(gradCourses[c]));
      if (index === 0 && d === 0 && taken.has(0)) q1 += 1;
    }
  }
  return { triples, q1, q14 };
}
