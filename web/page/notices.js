// Notices above the chapters for what the page could not do as asked, so that nothing changes
// silently: values a link asked for that were refused (the URL is corrected), and a model file or
// pasted config named in the link but not read in this page (a link cannot carry a file). Each has
// its key; showing a key again replaces its text, and the reader can close one.

/** The notices in `box` (index.html's #notices): { show(key, html), clear(key), text(key) }. */
export function createNotices(box) {
  const find = (key) => box.querySelector(`[data-notice="${key}"]`);
  return {
    show(key, html) {
      let n = find(key);
      if (!n) {
        n = document.createElement('div');
        n.className = 'notice';
        n.dataset.notice = key;
        n.innerHTML = '<p></p><button type="button" class="close" aria-label="Close this notice">×</button>';
        n.querySelector('.close').addEventListener('click', () => n.remove());
        box.append(n);
      }
      n.querySelector('p').innerHTML = html;
    },
    clear(key) { find(key)?.remove(); },
    text: (key) => find(key)?.textContent ?? '',
  };
}

const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** What a link asked for and the page refused ([{ key, text, why }]), in words. */
export function refusedText(refused) {
  const each = refused.map((r) => `<code>${esc(r.key)}=${esc(r.text)}</code> (${esc(r.why)})`);
  return `This link asked for ${refused.length === 1 ? 'a value' : 'values'} the page refuses: ${each.join(', ')}. `
    + 'The page uses its defaults there instead, and the address now holds the settings it shows.';
}

/** A model named in the URL (st.model) that this page has not read: what was dropped, and how to get it back. */
export function droppedText(model) {
  if (model === 'pasted config') {
    return 'These settings were read from a pasted config, which a link cannot carry. The page shows the settings '
      + 'read from it, but not what only the config holds (LongRoPE\'s per-pair factors, Llama 4\'s list of NoPE '
      + 'layers): paste it again (Settings → paste a config) to get those back.';
  }
  return `These settings were read from the model file “${esc(model)}”, which a link cannot carry, and it is not open `
    + 'in this page. The page shows the settings read from it, but not what only the file holds (a learned position '
    + 'table\'s weights, freq_factors, LongRoPE\'s factors): open it again (Settings → open a model file, or drop it on '
    + 'the page) to get those back.';
}
