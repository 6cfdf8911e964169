// A "pair i" control beyond the pairs there are (the shift and rope-rotation views): refused when
// typed, and said in the note when d_model or the rotated width shrank under it.

/** The rule for pair i of `pairs` pairs (`of` names what gives them), or '' when it is one of them. */
export function pairRule(v, pairs, of) {
  if (pairs < 1 || v < pairs) return '';  // no pair at all: the view says the settings' rule
  return `pair i: at most ${pairs - 1}, the last of the ${pairs === 1 ? 'one pair' : `${pairs} pairs`} of ${of}`;
}

/** A note's opening when the pair asked for is past the last one, which is drawn instead; else ''. */
export function pastLastPair(asked, drawn, of) {
  return asked > drawn ? `Pair ${asked} is past the last pair of ${of}: pair ${drawn} is drawn. ` : '';
}
