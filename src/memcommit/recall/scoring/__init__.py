"""The scoring wing: how much each indexed memory matches a query, and the top k.

    search          one query's search over postings, written once for every formula
    maxscore        top-k over sums of per-term scores without reading every posting
    cosine, tfidf   the seed's TF-IDF cosine (a formula of search) and its arithmetic; the Query
    bm25            BM25 of exact terms and of stems (formulas of search)
    jaccard         shared terms over all terms (a formula of search, and its scorer)
    scorers         the scorer protocols (what a scorer declares) and the built-in scorers
    memory          the default scorer: stem BM25 with sessions, speakers, dates, spelling
    speakers, when, spelling   the default scorer's parts
    registry        the scorers recall knows by name
    params          checks of a scorer's parameters
    components      the named parts of a score, for the explanation

Scoring reads the index wing and never the store.
"""
