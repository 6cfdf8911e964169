// The models in the settings bar's list: the package's presets (pe.presets, published configs of
// real models), each read once at startup by readModel and settingsFromModel
// (web/settings/model-settings.js), like a pasted config. Reading them before the first frame means a
// preset in the URL draws right from the start, and choosing one later is immediate.
import { settingsFromModel } from './model-settings.js';

// A preset keeps only a config's positional keys. Where that drops model_type (BLOOM's), readModel
// would not know the scheme: the preset's own `scheme` puts back a key readModel reads for it.
const SCHEME_KEYS = { alibi: { alibi: true }, learned: { position_embedding_type: 'absolute' } };
function withSchemeKey(p) {
  return 'model_type' in (p.config.text_config ?? p.config) ? p.config : { ...SCHEME_KEYS[p.scheme], ...p.config };
}

/**
 * Reads every preset, one per task (the page stays free between them). Resolves to { list (the
 * presets read), get(id, layerType) }: get gives { p (the preset), lt (its layer type, if it has
 * several), ...settingsFromModel's result }, or null for no preset.
 */
export async function readPresets(pe) {
  const readings = new Map();
  for (const p of pe.presets.presets) {
    await new Promise((resolve) => { setTimeout(resolve, 0); });
    try {
      const model = await pe.readModel(withSchemeKey(p));
      const read = (layerType) => settingsFromModel(model, { layerType, config: p.config });
      const byLayer = new Map((p.layerTypes ?? [undefined]).map((lt) => [lt, read(lt)]));
      const scheme = byLayer.values().next().value.scheme;
      if (scheme !== p.scheme) console.error(`preset ${p.id}: readModel reads it as ${scheme}, presets.json says ${p.scheme}`);
      readings.set(p.id, { p, byLayer });
    } catch (e) {
      console.error(`preset ${p.id} cannot be read: ${e.message}`);
    }
  }
  return {
    list: [...readings.values()].map((x) => x.p),
    get(id, layerType) {
      const x = readings.get(id);
      if (!x) return null;
      const lt = x.p.layerTypes ? (layerType ?? x.p.layerTypes[0]) : undefined;
      const r = x.byLayer.get(lt);
      return r ? { p: x.p, lt, ...r } : null;
    },
  };
}
