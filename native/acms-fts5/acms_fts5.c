/*
** acms_fts5: FTS5 auxiliary functions (and an aggregate over one of them) that let the embedded keyword search (Fts5TextBackend) score with
** BM25 statistics drawn from one scope's rows instead of the whole table's (issue 24, finding 4: one
** tenant's writes must never move another's scores). FTS5's own bm25() reads the row count, the token
** count and each phrase's row count from the whole table and takes none from its caller; these take them
** as arguments.
**
**   acms_bm25(chunks_fts, nRow, nToken, nHit_0, .., nHit_{k-1})
**     Minus the BM25 relevance of the current row, computed exactly as fts5_aux.c's fts5Bm25Function
**     computes bm25(chunks_fts, 1.0, 0.0) (k1 = 1.2, b = 0.75, the first column weighing 1 and every other
**     0, |D| the row's tokens over every column, IDF ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, phrases
**     added in query order), but with N = nRow, avgdl = nToken / nRow and phrase i's n = nHit_i. Phrases
**     from k on (the scope's `rid` filter) weigh 0 in bm25() and are left out. Given the whole table's
**     statistics it returns bm25()'s value bit for bit.
**
**   acms_tf(chunks_fts, k [, keys])
**     The current row's term counts for the ranking aggregate below: a blob of 32-bit integers (native byte
**     order), for each query phrase i < k that occurs in the first column, the pair (i, its instances
**     there), in phrase order. With keys (a blob of ascending 64-bit rowids, native byte order: a scope's
**     rows), NULL for a row not among them, which the aggregate leaves out. Each phrase's positions are walked on their own (xPhraseFirst), which costs
**     less than FTS5's instance array (xInst merges every phrase's positions); the row's length is not read
**     here (acms_topk reads it only for the rows that may rank).
**   acms_topk(rowid, acms_tf(chunks_fts, k), k, lim, cap, nRow, nToken, 'chunks_fts')   (an aggregate)
**     The scope's BM25 statistics and its best rows in one pass over the matched rows (rows whose acms_tf is
**     NULL, outside the scope's keys, are left out), instead of a pass
**     counting each phrase's rows and another ranking with acms_bm25; it also beats bm25() with ORDER BY
**     and LIMIT over the whole table, which counts each phrase's rows in passes of their own). Each phrase's n is the
**     number of aggregated rows holding it; at the end each row is scored exactly as acms_bm25 scores it with
**     N = nRow, avgdl = nToken / nRow and those n, and the lim rows of least rank (minus the relevance; ties
**     by least rowid) are kept, and with them every other row ranked exactly as the last kept one (up to
**     lim + 16 of them), so a caller that orders ties its own way finds the whole tie at the cut. A row's
**     length |D| (its tokens over every column) is read from the table's docsize shadow table (the last
**     argument names the table) only for the rows that may be kept: each row's rank is first bounded with
**     |D| as small as its counts allow (the largest of them), the lim rows of least bound are ranked exactly,
**     and a row whose bound ranks after the worst of those can be neither kept nor tied with the cut (the
**     rank only grows with |D|). Long queries over many rows read ~13% of the rows' lengths. A blob
**     (native byte order): int32 k; k doubles, each phrase's n; int32 m, the rows kept, or -1 when more than
**     cap rows were aggregated (their terms are no longer kept, so only the counts are there: rank with
**     acms_bm25); int32 flags, bit 0 set when every row tied with the last kept one is kept, bit 1 when every
**     row is; then m pairs (int64 rowid, double rank), best first. NULL when no row was aggregated.
**   acms_postings(rowid, acms_tf(chunks_fts, 1), 'chunks_fts')   (an aggregate)
**     One phrase's postings for the keyword posting cache (KeywordPostings): every aggregated row's rowid,
**     the phrase's instances in it and the row's length |D| (read from the docsize shadow table of the table
**     the last argument names). A blob (native byte order) of three arrays of n entries each: n doubles, the
**     rowids in the order aggregated (FTS5's, ascending), n int32 counts and n int32 lengths. NULL when no row
**     was aggregated.
**   acms_idf(nRow, nHit)
**     BM25's IDF of a phrase held by nHit of nRow rows, as acms_bm25 and acms_topk compute it, for a caller
**     scoring with the same formula (the posting cache), so their scores agree bit for bit.
** Loaded into the connection by better-sqlite3's loadExtension (entry point sqlite3_acmsfts_init); built
** by scripts/build-native.mjs against the SQLite headers better-sqlite3 bundles.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

/* The SELECT of a row's docsize record from FTS5 table zTable's shadow table (sqlite3_free it); 0 when out of memory. */
static char *acmsDocsizeSql(const char *zTable) {
  return sqlite3_mprintf("SELECT sz FROM \"%w_docsize\" WHERE id = ?", zTable);
}

/* BM25's IDF of a phrase held by nHit of nRow rows, as fts5Bm25GetData computes it (floored at 1e-6). */
static double acmsIdf(sqlite3_int64 nRow, sqlite3_int64 nHit) {
  double idf = log((nRow - nHit + 0.5) / (nHit + 0.5));
  return idf <= 0.0 ? 1e-6 : idf;
}

/*
** A phrase's term-frequency factor in a row of |D| tokens, as fts5Bm25Function computes it (k1 = 1.2,
** b = 0.75): the row's relevance adds IDF times this for each phrase. acms_bm25 and acms_topk both score
** through it, so they agree bit for bit.
*/
static double acmsTfFactor(double f, double D, double avgdl) {
  const double k1 = 1.2;
  const double b = 0.75;
  return (f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / avgdl));
}

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
      p->aIDF[i] = acmsIdf(nRow, nHit);
    }
    if (pApi->xSetAuxdata(pFts, p, sqlite3_free) != SQLITE_OK) return SQLITE_NOMEM;
  }
  *ppData = p;
  return SQLITE_OK;
}

static void acmsBm25Function(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
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
      score += pData->aIDF[i] * acmsTfFactor(pData->aFreq[i], D, pData->avgdl);
    }
    sqlite3_result_double(pCtx, -1.0 * score);
  } else if (rc == SQLITE_MISUSE) {
    sqlite3_result_error(pCtx, "acms_bm25(fts, nRow > 0, nToken, nHit_0, ..): one nHit per scored phrase at most", -1);
  } else {
    sqlite3_result_error_code(pCtx, rc);
  }
}

/* The most phrases acms_tf and acms_topk take. */
#define ACMS_MAX_PHRASES 256

static void acmsTfFunction(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  int aOut[2 * ACMS_MAX_PHRASES];
  int nPhrase, nOut = 0, i, rc = SQLITE_OK;
  if (nVal != 1 && nVal != 2) {
    sqlite3_result_error(pCtx, "acms_tf(fts, k [, keys]) takes one or two arguments after the table", -1);
    return;
  }
  if (nVal == 2) {
    /* keys: the rows to count, ascending 64-bit rowids (native byte order); any other row gives NULL. */
    const sqlite3_int64 *aKey = (const sqlite3_int64 *)sqlite3_value_blob(apVal[1]);
    int nKey = sqlite3_value_bytes(apVal[1]) / (int)sizeof(sqlite3_int64);
    sqlite3_int64 rowid = pApi->xRowid(pFts);
    int lo = 0, hi = nKey;
    if (sqlite3_value_type(apVal[1]) != SQLITE_BLOB || sqlite3_value_bytes(apVal[1]) % (int)sizeof(sqlite3_int64) != 0) {
      sqlite3_result_error(pCtx, "acms_tf(fts, k, keys): keys must be a blob of 64-bit rowids", -1);
      return;
    }
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (aKey[mid] < rowid) lo = mid + 1;
      else hi = mid;
    }
    if (lo == nKey || aKey[lo] != rowid) {
      sqlite3_result_null(pCtx);
      return;
    }
  }
  nPhrase = sqlite3_value_int(apVal[0]);
  if (nPhrase < 0 || nPhrase > ACMS_MAX_PHRASES || nPhrase > pApi->xPhraseCount(pFts)) {
    sqlite3_result_error(pCtx, "acms_tf(fts, k): k must be between 0 and the query's phrases (at most 256)", -1);
    return;
  }
  /* Each phrase's own instances (what xInst lists for it), walked phrase by phrase: cheaper than FTS5's
  ** instance array, which merges every phrase's positions in order. */
  for (i = 0; rc == SQLITE_OK && i < nPhrase; i++) {
    Fts5PhraseIter it;
    int ic, io, n = 0;
    rc = pApi->xPhraseFirst(pFts, i, &it, &ic, &io);
    while (rc == SQLITE_OK && ic >= 0) {
      if (ic == 0) n++;
      pApi->xPhraseNext(pFts, &it, &ic, &io);
    }
    if (n > 0) {
      aOut[nOut++] = i;
      aOut[nOut++] = n;
    }
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  sqlite3_result_blob(pCtx, aOut, (int)(sizeof(int) * (size_t)nOut), SQLITE_TRANSIENT);
}

/* One ranked row of acms_topk. */
typedef struct AcmsRanked {
  sqlite3_int64 rowid;
  double rank;
} AcmsRanked;

/* acms_topk's state: the arguments read at the first row, each phrase's row count, the rows' terms. */
typedef struct AcmsTopK {
  int init;
  int nPhrase;
  sqlite3_int64 lim, cap, nRow, nToken;
  sqlite3_int64 aHit[ACMS_MAX_PHRASES];
  sqlite3_int64 nAgg; /* rows aggregated */
  int over;           /* more than cap rows: aBuf freed, only aHit kept */
  unsigned char *aBuf; /* per row: int64 rowid, then the acms_tf blob's length (int32) and the blob */
  sqlite3_int64 nBuf, nAlloc;
  char *zDocsize; /* SELECT of a row's sizes from the table's docsize shadow table */
} AcmsTopK;

/* Whether a ranks before b: less rank, then less rowid. */
static int acmsBefore(const AcmsRanked *a, const AcmsRanked *b) {
  return a->rank < b->rank || (a->rank == b->rank && a->rowid < b->rowid);
}

/* Restores the heap (the row ranking last at the root) below slot i. */
static void acmsSiftDown(AcmsRanked *aHeap, sqlite3_int64 n, sqlite3_int64 i) {
  for (;;) {
    sqlite3_int64 l = 2 * i + 1, r = l + 1, worst = i;
    AcmsRanked t;
    if (l < n && acmsBefore(&aHeap[worst], &aHeap[l])) worst = l;
    if (r < n && acmsBefore(&aHeap[worst], &aHeap[r])) worst = r;
    if (worst == i) return;
    t = aHeap[i];
    aHeap[i] = aHeap[worst];
    aHeap[worst] = t;
    i = worst;
  }
}

static int acmsCompareRanked(const void *pa, const void *pb) {
  const AcmsRanked *a = (const AcmsRanked *)pa, *b = (const AcmsRanked *)pb;
  return acmsBefore(a, b) ? -1 : acmsBefore(b, a) ? 1 : 0;
}

static void acmsTopKStep(sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  AcmsTopK *p = (AcmsTopK *)sqlite3_aggregate_context(pCtx, sizeof(AcmsTopK));
  const int *aTf;
  int nTf, i;
  sqlite3_int64 rowid;
  (void)nVal; /* registered with exactly 8 arguments */
  if (p == 0) {
    sqlite3_result_error_nomem(pCtx);
    return;
  }
  if (!p->init) {
    p->init = 1;
    p->nPhrase = sqlite3_value_int(apVal[2]);
    p->lim = sqlite3_value_int64(apVal[3]);
    p->cap = sqlite3_value_int64(apVal[4]);
    p->nRow = sqlite3_value_int64(apVal[5]);
    p->nToken = sqlite3_value_int64(apVal[6]);
    if (p->nPhrase < 0 || p->nPhrase > ACMS_MAX_PHRASES || p->lim < 0 || p->cap < 0 || p->nRow <= 0 ||
        sqlite3_value_type(apVal[7]) != SQLITE_TEXT) {
      p->nPhrase = -1;
    } else {
      p->zDocsize = acmsDocsizeSql((const char *)sqlite3_value_text(apVal[7]));
      if (p->zDocsize == 0) {
        sqlite3_result_error_nomem(pCtx);
        return;
      }
    }
  }
  if (p->nPhrase < 0) {
    sqlite3_result_error(pCtx, "acms_topk(rowid, tf, 0 <= k <= 256, lim >= 0, cap >= 0, nRow > 0, nToken, fts table name)", -1);
    return;
  }
  /* A row acms_tf left out (not among its keys) is not aggregated. */
  if (sqlite3_value_type(apVal[1]) == SQLITE_NULL) return;
  rowid = sqlite3_value_int64(apVal[0]);
  aTf = (const int *)sqlite3_value_blob(apVal[1]);
  nTf = sqlite3_value_bytes(apVal[1]);
  if (sqlite3_value_type(apVal[1]) != SQLITE_BLOB || nTf % (int)(2 * sizeof(int)) != 0 || (nTf > 0 && aTf == 0)) {
    sqlite3_result_error(pCtx, "acms_topk: the second argument must be acms_tf(fts, k)", -1);
    return;
  }
  for (i = 0; i < nTf / (int)sizeof(int); i += 2) {
    if (aTf[i] < 0 || aTf[i] >= p->nPhrase) {
      sqlite3_result_error(pCtx, "acms_topk: acms_tf's k must be acms_topk's k", -1);
      return;
    }
    p->aHit[aTf[i]]++;
  }
  p->nAgg++;
  if (p->over) return;
  if (p->nAgg > p->cap) {
    p->over = 1;
    sqlite3_free(p->aBuf);
    p->aBuf = 0;
    p->nBuf = p->nAlloc = 0;
    return;
  }
  {
    sqlite3_int64 need = p->nBuf + (sqlite3_int64)sizeof(sqlite3_int64) + (sqlite3_int64)sizeof(int) + nTf;
    if (need > p->nAlloc) {
      sqlite3_int64 nNew = p->nAlloc ? p->nAlloc * 2 : 4096;
      unsigned char *aNew;
      while (nNew < need) nNew *= 2;
      aNew = (unsigned char *)sqlite3_realloc64(p->aBuf, (sqlite3_uint64)nNew);
      if (aNew == 0) {
        sqlite3_result_error_nomem(pCtx);
        return;
      }
      p->aBuf = aNew;
      p->nAlloc = nNew;
    }
    memcpy(p->aBuf + p->nBuf, &rowid, sizeof(rowid));
    p->nBuf += sizeof(rowid);
    memcpy(p->aBuf + p->nBuf, &nTf, sizeof(int));
    p->nBuf += sizeof(int);
    if (nTf > 0) memcpy(p->aBuf + p->nBuf, aTf, (size_t)nTf);
    p->nBuf += nTf;
  }
}

/* Rows tied with the last kept one that acms_topk keeps as well, at most (beyond lim). */
static sqlite3_int64 acmsTieRoom(sqlite3_int64 lim) {
  return lim + 16;
}

/* The sum of the SQLite varints of an FTS5 docsize blob: a row's tokens over every column. */
static sqlite3_int64 acmsDocsizeTokens(const unsigned char *a, int n) {
  sqlite3_int64 total = 0;
  int pos = 0;
  while (pos < n) {
    sqlite3_uint64 v = 0;
    int i;
    for (i = 0; i < 8 && pos < n; i++) {
      unsigned char c = a[pos++];
      v = (v << 7) | (c & 0x7f);
      if ((c & 0x80) == 0) break;
    }
    if (i == 8 && pos < n) v = (v << 8) | a[pos++];
    total += (sqlite3_int64)v;
  }
  return total;
}

/*
** Row rowid's length |D| (its tokens over every column) into *pTokens, read by pSize (acmsDocsizeSql's
** statement). SQLITE_OK, or the error (SQLITE_CORRUPT for a row without a docsize record).
*/
static int acmsRowTokens(sqlite3_stmt *pSize, sqlite3_int64 rowid, sqlite3_int64 *pTokens) {
  int rc;
  sqlite3_bind_int64(pSize, 1, rowid);
  rc = sqlite3_step(pSize);
  if (rc != SQLITE_ROW) {
    sqlite3_reset(pSize);
    return rc == SQLITE_DONE ? SQLITE_CORRUPT : rc;
  }
  *pTokens = acmsDocsizeTokens((const unsigned char *)sqlite3_column_blob(pSize, 0), sqlite3_column_bytes(pSize, 0));
  return sqlite3_reset(pSize);
}

/* Minus a row's relevance (acms_bm25's sum, in phrase order) given its term counts and |D|. */
static double acmsRank(const int *aTf, int nInt, const double *aIDF, double D, double avgdl) {
  double score = 0.0;
  int j;
  for (j = 0; j < nInt; j += 2) {
    double f = (double)aTf[j + 1];
    score += aIDF[aTf[j]] * acmsTfFactor(f, D, avgdl);
  }
  return -1.0 * score;
}

/* One aggregated row as the ranking reads it back: its terms in aBuf, and the least rank its terms allow. */
typedef struct AcmsRow {
  sqlite3_int64 rowid;
  const int *aTf;
  int nInt;
  double lb;  /* the rank with |D| as small as the row's terms allow: never more than its exact rank */
  int done;   /* exact rank computed (in aAll) */
} AcmsRow;

/* Whether a's bound ranks before b's (less bound, then less rowid). */
static int acmsRowBefore(const AcmsRow *a, const AcmsRow *b) {
  return a->lb < b->lb || (a->lb == b->lb && a->rowid < b->rowid);
}

/*
** The exact rank of row r: reads |D| from the docsize table (a row with no term needs none: its relevance is
** 0 whatever |D|). SQLITE_OK, or the error.
*/
static int acmsExactRank(sqlite3_stmt *pSize, const AcmsRow *r, const double *aIDF, double avgdl, double *pRank) {
  int rc;
  sqlite3_int64 nTokens = 0;
  if (r->nInt == 0) {
    *pRank = acmsRank(r->aTf, 0, aIDF, 0.0, avgdl);
    return SQLITE_OK;
  }
  rc = acmsRowTokens(pSize, r->rowid, &nTokens);
  *pRank = acmsRank(r->aTf, r->nInt, aIDF, (double)nTokens, avgdl);
  return rc;
}

static void acmsTopKFinal(sqlite3_context *pCtx) {
  AcmsTopK *p = (AcmsTopK *)sqlite3_aggregate_context(pCtx, 0);
  double aIDF[ACMS_MAX_PHRASES];
  double avgdl;
  AcmsRanked *aAll = 0, *aHeap = 0;
  AcmsRow *aRow = 0;
  sqlite3_int64 *aPick = 0;
  sqlite3_stmt *pSize = 0;
  sqlite3_int64 nAll = 0, nHeap = 0, nKept = 0, off = 0, nOut, i;
  unsigned char *aOut;
  int m, flags = 0, rc = SQLITE_OK;
  if (p == 0 || !p->init || p->nPhrase < 0) {
    if (p) sqlite3_free(p->zDocsize);
    sqlite3_result_null(pCtx);
    return;
  }
  /* As acmsBm25Data computes them. */
  avgdl = (double)p->nToken / (double)p->nRow;
  for (i = 0; i < p->nPhrase; i++) {
    aIDF[i] = acmsIdf(p->nRow, p->aHit[i]);
  }
  if (!p->over && p->lim > 0 && p->nAgg > 0) {
    sqlite3_int64 nCap = p->lim < p->nAgg ? p->lim : p->nAgg;
    sqlite3_int64 nPick = 0;
    double rWorst = 0.0;
    aRow = (AcmsRow *)sqlite3_malloc64(sizeof(AcmsRow) * (sqlite3_uint64)p->nAgg);
    aAll = (AcmsRanked *)sqlite3_malloc64(sizeof(AcmsRanked) * (sqlite3_uint64)p->nAgg);
    aPick = (sqlite3_int64 *)sqlite3_malloc64(sizeof(sqlite3_int64) * (sqlite3_uint64)nCap);
    aHeap = (AcmsRanked *)sqlite3_malloc64(sizeof(AcmsRanked) * (sqlite3_uint64)(nCap + acmsTieRoom(p->lim)));
    rc = (aRow && aAll && aPick && aHeap) ? SQLITE_OK : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(sqlite3_context_db_handle(pCtx), p->zDocsize, -1, &pSize, 0);
    /* Each row's bound: its rank with |D| the largest of its term counts (the row holds at least that many
    ** tokens; the rank only grows with |D|, and its floating-point computation is monotonic too). */
    for (i = 0; rc == SQLITE_OK && off < p->nBuf; i++) {
      AcmsRow *r = &aRow[i];
      int nTf, j, fMax = 0;
      memcpy(&r->rowid, p->aBuf + off, sizeof(r->rowid));
      off += sizeof(r->rowid);
      memcpy(&nTf, p->aBuf + off, sizeof(int));
      off += sizeof(int);
      r->aTf = (const int *)(p->aBuf + off);
      r->nInt = nTf / (int)sizeof(int);
      off += nTf;
      for (j = 1; j < r->nInt; j += 2)
        if (r->aTf[j] > fMax) fMax = r->aTf[j];
      r->lb = acmsRank(r->aTf, r->nInt, aIDF, (double)fMax, avgdl);
      r->done = 0;
    }
    /* The nCap rows of least bound (a heap, the greatest bound at its root), ranked exactly: the worst of
    ** them, rWorst, is no better than the cut, so a row whose bound ranks after rWorst is neither kept nor
    ** tied with the cut, and only rows whose bound reaches rWorst need their |D| read. */
    for (i = 0; rc == SQLITE_OK && i < p->nAgg; i++) {
      if (nPick < nCap) {
        sqlite3_int64 c = nPick++;
        aPick[c] = i;
        while (c > 0 && acmsRowBefore(&aRow[aPick[(c - 1) / 2]], &aRow[aPick[c]])) {
          sqlite3_int64 t = aPick[c];
          aPick[c] = aPick[(c - 1) / 2];
          aPick[(c - 1) / 2] = t;
          c = (c - 1) / 2;
        }
      } else if (acmsRowBefore(&aRow[i], &aRow[aPick[0]])) {
        sqlite3_int64 c = 0;
        aPick[0] = i;
        for (;;) {
          sqlite3_int64 l = 2 * c + 1, r = l + 1, worst = c, t;
          if (l < nPick && acmsRowBefore(&aRow[aPick[worst]], &aRow[aPick[l]])) worst = l;
          if (r < nPick && acmsRowBefore(&aRow[aPick[worst]], &aRow[aPick[r]])) worst = r;
          if (worst == c) break;
          t = aPick[c];
          aPick[c] = aPick[worst];
          aPick[worst] = t;
          c = worst;
        }
      }
    }
    for (i = 0; rc == SQLITE_OK && i < nPick; i++) {
      AcmsRow *r = &aRow[aPick[i]];
      AcmsRanked e;
      e.rowid = r->rowid;
      rc = acmsExactRank(pSize, r, aIDF, avgdl, &e.rank);
      r->done = 1;
      aAll[nAll++] = e;
      if (i == 0 || e.rank > rWorst) rWorst = e.rank;
    }
    for (i = 0; rc == SQLITE_OK && i < p->nAgg; i++) {
      AcmsRow *r = &aRow[i];
      AcmsRanked e;
      if (r->done || r->lb > rWorst) continue;
      e.rowid = r->rowid;
      rc = acmsExactRank(pSize, r, aIDF, avgdl, &e.rank);
      r->done = 1;
      aAll[nAll++] = e;
    }
    /* The best lim of the rows ranked exactly (every row that can be kept or tied with the cut is among them). */
    for (i = 0; rc == SQLITE_OK && i < nAll; i++) {
      AcmsRanked r = aAll[i];
      if (nHeap < p->lim) {
        sqlite3_int64 c = nHeap++;
        aHeap[c] = r;
        while (c > 0 && acmsBefore(&aHeap[(c - 1) / 2], &aHeap[c])) {
          AcmsRanked t = aHeap[c];
          aHeap[c] = aHeap[(c - 1) / 2];
          aHeap[(c - 1) / 2] = t;
          c = (c - 1) / 2;
        }
      } else if (acmsBefore(&r, &aHeap[0])) {
        aHeap[0] = r;
        acmsSiftDown(aHeap, nHeap, 0);
      }
    }
    nKept = nHeap;
    if (rc != SQLITE_OK) {
      nKept = 0;
    } else if (nHeap == p->nAgg) {
      flags = 3; /* every row kept, so every tie too */
    } else {
      /* The rows ranked exactly as the last kept one (the heap's root) may be cut anywhere among them: keep
      ** them all, when they fit, so a caller ordering ties its own way needs no second pass. */
      double rCut = aHeap[0].rank;
      sqlite3_int64 nLess = 0, nTie = 0;
      for (i = 0; i < nAll; i++)
        if (aAll[i].rank == rCut) nTie++;
      /* Too many ties: the heap's rows as they are (the least rowids of the tie), the tie not all there. */
      if (nTie <= acmsTieRoom(p->lim)) {
        for (i = 0; i < nHeap; i++)
          if (aHeap[i].rank < rCut) aHeap[nLess++] = aHeap[i];
        nKept = nLess;
        for (i = 0; i < nAll; i++)
          if (aAll[i].rank == rCut) aHeap[nKept++] = aAll[i];
        flags = 1;
      }
    }
    if (rc == SQLITE_OK) qsort(aHeap, (size_t)nKept, sizeof(AcmsRanked), acmsCompareRanked);
  }
  sqlite3_finalize(pSize);
  sqlite3_free(aRow);
  sqlite3_free(aPick);
  sqlite3_free(aAll);
  sqlite3_free(p->aBuf);
  sqlite3_free(p->zDocsize);
  p->aBuf = 0;
  p->zDocsize = 0;
  if (rc != SQLITE_OK) {
    sqlite3_free(aHeap);
    if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(pCtx);
    else sqlite3_result_error_code(pCtx, rc);
    return;
  }
  m = p->over ? -1 : (int)nKept;
  nOut = (sqlite3_int64)sizeof(int) + p->nPhrase * (sqlite3_int64)sizeof(double) + 2 * (sqlite3_int64)sizeof(int) +
         nKept * (sqlite3_int64)(sizeof(sqlite3_int64) + sizeof(double));
  aOut = (unsigned char *)sqlite3_malloc64((sqlite3_uint64)nOut);
  if (aOut == 0) {
    sqlite3_free(aHeap);
    sqlite3_result_error_nomem(pCtx);
    return;
  }
  off = 0;
  memcpy(aOut + off, &p->nPhrase, sizeof(int));
  off += sizeof(int);
  for (i = 0; i < p->nPhrase; i++) {
    double n = (double)p->aHit[i];
    memcpy(aOut + off, &n, sizeof(double));
    off += sizeof(double);
  }
  memcpy(aOut + off, &m, sizeof(int));
  off += sizeof(int);
  memcpy(aOut + off, &flags, sizeof(int));
  off += sizeof(int);
  for (i = 0; i < nKept; i++) {
    memcpy(aOut + off, &aHeap[i].rowid, sizeof(sqlite3_int64));
    off += sizeof(sqlite3_int64);
    memcpy(aOut + off, &aHeap[i].rank, sizeof(double));
    off += sizeof(double);
  }
  sqlite3_free(aHeap);
  sqlite3_result_blob64(pCtx, aOut, (sqlite3_uint64)nOut, sqlite3_free);
}

/* acms_postings's state: the docsize look-up, then the rows' keys, counts and lengths as aggregated. */
typedef struct AcmsPostings {
  int init;
  sqlite3_stmt *pSize;
  double *aRow;
  int *aTf;
  int *aLen;
  sqlite3_int64 n, nAlloc;
} AcmsPostings;

static void acmsPostingsStep(sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  AcmsPostings *p = (AcmsPostings *)sqlite3_aggregate_context(pCtx, sizeof(AcmsPostings));
  const int *aTf;
  int nTf, rc;
  sqlite3_int64 rowid, nTokens = 0;
  (void)nVal; /* registered with exactly 3 arguments */
  if (p == 0) {
    sqlite3_result_error_nomem(pCtx);
    return;
  }
  if (!p->init) {
    char *zSql;
    p->init = 1;
    if (sqlite3_value_type(apVal[2]) != SQLITE_TEXT) {
      sqlite3_result_error(pCtx, "acms_postings(rowid, acms_tf(fts, 1), fts table name)", -1);
      return;
    }
    zSql = acmsDocsizeSql((const char *)sqlite3_value_text(apVal[2]));
    if (zSql == 0) {
      sqlite3_result_error_nomem(pCtx);
      return;
    }
    rc = sqlite3_prepare_v2(sqlite3_context_db_handle(pCtx), zSql, -1, &p->pSize, 0);
    sqlite3_free(zSql);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(pCtx, rc);
      return;
    }
  }
  if (p->pSize == 0) {
    sqlite3_result_error(pCtx, "acms_postings(rowid, acms_tf(fts, 1), fts table name)", -1);
    return;
  }
  if (sqlite3_value_type(apVal[1]) == SQLITE_NULL) return;
  aTf = (const int *)sqlite3_value_blob(apVal[1]);
  nTf = sqlite3_value_bytes(apVal[1]);
  if (sqlite3_value_type(apVal[1]) != SQLITE_BLOB || (nTf != 0 && nTf != (int)(2 * sizeof(int))) || (nTf > 0 && (aTf == 0 || aTf[0] != 0))) {
    sqlite3_result_error(pCtx, "acms_postings: the second argument must be acms_tf(fts, 1)", -1);
    return;
  }
  /* A row holding the phrase in no scored column (none here: the MATCH names the body) has no posting. */
  if (nTf == 0) return;
  rowid = sqlite3_value_int64(apVal[0]);
  if (p->n == p->nAlloc) {
    sqlite3_int64 nNew = p->nAlloc ? p->nAlloc * 2 : 256;
    double *aRow = (double *)sqlite3_realloc64(p->aRow, sizeof(double) * (sqlite3_uint64)nNew);
    int *aTfNew = aRow ? (int *)sqlite3_realloc64(p->aTf, sizeof(int) * (sqlite3_uint64)nNew) : 0;
    int *aLen = aTfNew ? (int *)sqlite3_realloc64(p->aLen, sizeof(int) * (sqlite3_uint64)nNew) : 0;
    if (aRow) p->aRow = aRow;
    if (aTfNew) p->aTf = aTfNew;
    if (aLen == 0) {
      sqlite3_result_error_nomem(pCtx);
      return;
    }
    p->aLen = aLen;
    p->nAlloc = nNew;
  }
  rc = acmsRowTokens(p->pSize, rowid, &nTokens);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  p->aLen[p->n] = (int)nTokens;
  p->aRow[p->n] = (double)rowid;
  p->aTf[p->n] = aTf[1];
  p->n++;
}

static void acmsPostingsFinal(sqlite3_context *pCtx) {
  AcmsPostings *p = (AcmsPostings *)sqlite3_aggregate_context(pCtx, 0);
  unsigned char *aOut = 0;
  sqlite3_uint64 nOut;
  if (p == 0) {
    sqlite3_result_null(pCtx);
    return;
  }
  sqlite3_finalize(p->pSize);
  if (p->n > 0) {
    nOut = (sqlite3_uint64)p->n * (sizeof(double) + 2 * sizeof(int));
    aOut = (unsigned char *)sqlite3_malloc64(nOut);
    if (aOut == 0) {
      sqlite3_result_error_nomem(pCtx);
    } else {
      memcpy(aOut, p->aRow, sizeof(double) * (size_t)p->n);
      memcpy(aOut + sizeof(double) * (size_t)p->n, p->aTf, sizeof(int) * (size_t)p->n);
      memcpy(aOut + (sizeof(double) + sizeof(int)) * (size_t)p->n, p->aLen, sizeof(int) * (size_t)p->n);
      sqlite3_result_blob64(pCtx, aOut, nOut, sqlite3_free);
    }
  } else {
    sqlite3_result_null(pCtx);
  }
  sqlite3_free(p->aRow);
  sqlite3_free(p->aTf);
  sqlite3_free(p->aLen);
}

static void acmsIdfFunction(sqlite3_context *pCtx, int nVal, sqlite3_value **apVal) {
  sqlite3_int64 nRow = sqlite3_value_int64(apVal[0]);
  sqlite3_int64 nHit = sqlite3_value_int64(apVal[1]);
  (void)nVal;
  if (nRow <= 0) {
    sqlite3_result_error(pCtx, "acms_idf(nRow > 0, nHit)", -1);
    return;
  }
  sqlite3_result_double(pCtx, acmsIdf(nRow, nHit));
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
  if (rc == SQLITE_OK) rc = fts5->xCreateFunction(fts5, "acms_tf", 0, acmsTfFunction, 0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "acms_topk", 8, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, 0, acmsTopKStep, acmsTopKFinal);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "acms_postings", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, 0, acmsPostingsStep, acmsPostingsFinal);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "acms_idf", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, 0, acmsIdfFunction, 0, 0);
  return rc;
}
