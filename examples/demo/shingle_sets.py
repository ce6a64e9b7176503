"""Character shingles and their Jaccard, as winnow's text verifier counts them
(the text scenario and bench/text_near_duplicates.py measure against these)."""

SHINGLE = 5  # codepoints, as winnow's TextNearDuplicateVerifier (text_shingle)


def shingles(text):
    """The set of SHINGLE-codepoint substrings (the whole text when shorter)."""
    if len(text) < SHINGLE:
        return {text} if text else set()
    return {text[i:i + SHINGLE] for i in range(len(text) - SHINGLE + 1)}


def jaccard(a, b):
    if not a and not b:
        return 1.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)
