/*
** acms_fts5: two FTS5 auxiliary functions that let the embedded keyword search (Fts5TextBackend) score with
** BM25 statistics drawn from one scope's rows instead of the whole table's (issue 24, finding 4: one
** tenant's writes must never move another's scores). FTS5's own bm25() reads the row count, the token
** count and each phrase's row count from the whole table and takes none from its caller; these take them
** as arguments.
**
**   acms_phrases(chunks_fts, k)
**     A blob of ceil(k/8) bytes: bit i (byte i/8, bit i%8) is set when query phrase i (0 <= i < k) occurs
**     in the current row. `SELECT acms_phrases(..) m, count(*) .. WHERE MATCH .. GROUP BY m` counts, in one
**     pass, the rows of a scope that hold each phrase.
**
**   acms_bm25(chunks_fts, nRow, nToken, nHit_0, .., nHit_{k-1})
**     Minus the BM25 relevance of the current row, computed exactly as fts5_aux.c's fts5Bm25Function
**     computes bm25(chunks_fts, 1.0, 0.0) (k1 = 1.2, b = 0.75, the first column weighing 1 and every other
**     0, |D| the row's tokens over every column, IDF ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, phrases
**     added in query order), but with N = nRow, avgdl = nToken / nRow and phrase i's n = nHit_i. Phrases
**     from k on (the scope's `rid` filter) weigh 0 in bm25() and are left out. Given the whole table's
**     statistics it returns bm25()'s value bit for bit.
**
** Loaded into the connection by better-sqlite3's loadExtension (entry point sqlite3_acmsfts_init); built
** by scripts/build-native.mjs against the SQLite headers better-sqlite3 bundles.
*/
#include <math.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

/* The statistics of one query, computed at its first row (FTS5 keeps them as the query's aux data). */
typedef struct AcmsBm25Data {
  int nPhrase;   /* phrases scored: the k nHit arguments */
  double avgdl;  /* nToken / nRow */
  double *aIDF;  /* IDF per scored phrase */
  double *aFreq; /* per-row scratch: each scored phrase's weighted count */
} AcmsBm25Data;

static int acmsBm25Data(const Fts5ExtensionApi *pApi, Fts5Context *pFts, int nVal, sqlite3_value **apVal, AcmsBm25Data **ppData) {
  AcmsBm25Data *p = (AcmsBm25Data *)pApi->xGetAuxdata(pFts, 0);
  if (p == 0) {
    int nPhrase = nVal - 2;
    int nQuery = pApi->xPhraseCount(pFts);
    sqlite3_int64 nRow, nToken;
    int i;
    if (nVal < 2 || nPhrase > nQuery) return SQLITE_MISUSE;
    p = (AcmsBm25Data *)sqlite3_malloc64(sizeof(AcmsBm25Data) + (sqlite3_int64)(nPhrase > 0 ? nPhrase : 1) * 2 * sizeof(double));
    if (p == 0) return SQLITE_NOMEM;
    memset(p, 0, sizeof(AcmsBm25Data));
    p->nPhrase = nPhrase;
    p->aIDF = (double *)&p[1];
    p->aFreq = &p->aIDF[nPhrase];
    nRow = sqlite3_value_int64(apVal[0]);
    nToken = sqlite3_value_int64(apVal[1]);
    if (nRow <= 0) {
      sqlite3_free(p);
      return SQLITE_MISUSE;
    }
    /* As fts5Bm25GetData computes them, from these statistics instead of the table's. */
    p->avgdl = (double)nToken / (double)nRow;
    for (i = 0; i < nPhrase; i++) {
      sqlite3_int64 nHit = sqlite3_value_int64(apVal[2 + i]);
      double idf = log((nRow - nHit + 0.5) / (nHit + 0.5));
      if (idf <= 0.0) idf = 1e-6;
      p->aIDF[i] = idf;
    }
    if (pApi->xSetAuxdata(pFts, p, sqlite3_free) != SQLITE_OK) return SQLITE_NOMEM;
  }
  *ppData = p;
  return SQLITE_OK;
}

static void acmsBm25Function(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  const double k1 = 1.2;
  const double b = 0.75;
  double score = 0.0;
  double D = 0.0;
  AcmsBm25Data *pData = 0;
  int nInst = 0;
  int i;
  int rc = acmsBm25Data(pApi, pFts, nVal, apVal, &pData);
  if (rc == SQLITE_OK) {
    memset(pData->aFreq, 0, sizeof(double) * pData->nPhrase);
    rc = pApi->xInstCount(pFts, &nInst);
  }
  for (i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int ip, ic, io;
    rc = pApi->xInst(pFts, i, &ip, &ic, &io);
    /* bm25(chunks_fts, 1.0, 0.0): an instance in the first column adds 1, in any other 0. */
    if (rc == SQLITE_OK && ip < pData->nPhrase) pData->aFreq[ip] += (ic == 0 ? 1.0 : 0.0);
  }
  if (rc == SQLITE_OK) {
    int nTok;
    rc = pApi->xColumnSize(pFts, -1, &nTok);
    D = (double)nTok;
  }
  if (rc == SQLITE_OK) {
    for (i = 0; i < pData->nPhrase; i++) {
      score += pData->aIDF[i] * ((pData->aFreq[i] * (k1 + 1.0)) / (pData->aFreq[i] + k1 * (1 - b + b * D / pData->avgdl)));
    }
    sqlite3_result_double(pCtx, -1.0 * score);
  } else if (rc == SQLITE_MISUSE) {
    sqlite3_result_error(pCtx, "acms_bm25(fts, nRow > 0, nToken, nHit_0, ..): one nHit per scored phrase at most", -1);
  } else {
    sqlite3_result_error_code(pCtx, rc);
  }
}

static void acmsPhrasesFunction(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  unsigned char mask[32];
  int nPhrase, nByte, i;
  if (nVal != 1) {
    sqlite3_result_error(pCtx, "acms_phrases(fts, k) takes one argument after the table", -1);
    return;
  }
  nPhrase = sqlite3_value_int(apVal[0]);
  if (nPhrase < 0 || nPhrase > 256 || nPhrase > pApi->xPhraseCount(pFts)) {
    sqlite3_result_error(pCtx, "acms_phrases(fts, k): k must be between 0 and the query's phrases (at most 256)", -1);
    return;
  }
  nByte = (nPhrase + 7) / 8;
  memset(mask, 0, sizeof(mask));
  for (i = 0; i < nPhrase; i++) {
    Fts5PhraseIter iter;
    int iCol = -1, iOff = -1;
    int rc = pApi->xPhraseFirst(pFts, i, &iter, &iCol, &iOff);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(pCtx, rc);
      return;
    }
    if (iCol >= 0) mask[i / 8] |= (unsigned char)(1 << (i % 8));
  }
  sqlite3_result_blob(pCtx, mask, nByte, SQLITE_TRANSIENT);
}

/* The connection's fts5_api (SQLite's documented way: SELECT fts5(?1) with a bound pointer). */
static fts5_api *acmsFts5Api(sqlite3 *db) {
  fts5_api *pRet = 0;
  sqlite3_stmt *pStmt = 0;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(pStmt, 1, (void *)&pRet, "fts5_api_ptr", 0);
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  return pRet;
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_acmsfts_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  fts5_api *fts5;
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  fts5 = acmsFts5Api(db);
  if (fts5 == 0 || fts5->iVersion < 2) {
    *pzErrMsg = sqlite3_mprintf("acms_fts5: this SQLite has no FTS5 (version 2 or later)");
    return SQLITE_ERROR;
  }
  rc = fts5->xCreateFunction(fts5, "acms_bm25", 0, acmsBm25Function, 0);
  if (rc == SQLITE_OK) rc = fts5->xCreateFunction(fts5, "acms_phrases", 0, acmsPhrasesFunction, 0);
  return rc;
}
