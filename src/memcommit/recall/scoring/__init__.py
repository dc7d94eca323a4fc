"""The scoring wing: how much each indexed memory matches a query, and the top k.

    tfidf, cosine   the seed's TF-IDF cosine with recency, and its search
    bm25            stem-class BM25 search
    maxscore        top-k over sums of per-term scores without reading every posting
    memory          the default scorer: BM25 with sessions, speakers, dates, spelling
    speakers, when, spelling   the default scorer's parts
    scorers         the scorer protocols and the built-in scorers
    components      the named parts of a score, for the explanation

Scoring reads the index wing and never the store.
"""
