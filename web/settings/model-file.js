// Opening a model file (.gguf, .safetensors, config.json, .npy), from the file input or dropped
// anywhere on the page: the package's readModel parses it, and settingsFromModel
// (web/settings/model-settings.js) turns what it found into the page's settings. Without readModel in the
// package, the file controls stay hidden and nothing here runs.
import { settingsFromModel } from './model-settings.js';

export const hasReadModel = (pe) => typeof pe.readModel === 'function';

/** Reads `file` with the package; resolves to settingsFromModel's result, rejects with readModel's message. */
async function openModelFile(pe, file) {
  const model = await pe.readModel(file);
  // A .npy holds one unnamed array: call its table by the file's name.
  if (model.positionTable && !model.positionTable.name) model.positionTable = { ...model.positionTable, name: file.name };
  return settingsFromModel(model);
}

/**
 * Wires a file input and dropping a file anywhere on the page to `onModel(result, file)`, and
 * `onError(message)`. Does nothing (the controls stay hidden) without readModel.
 */
export function setupModelFile(pe, { container, input, onModel, onError }) {
  if (!hasReadModel(pe)) return;
  container.hidden = false;
  const open = async (file) => {
    try {
      onModel(await openModelFile(pe, file), file);
    } catch (e) {
      onError(`${file.name}: ${e.message}`);
    }
  };
  input.addEventListener('change', () => { if (input.files[0]) open(input.files[0]); input.value = ''; });
  document.addEventListener('dragover', (e) => { if (e.dataTransfer?.types.includes('Files')) e.preventDefault(); });
  document.addEventListener('drop', (e) => {
    // A drop on the learned view's own file box is that view's; anywhere else opens the model.
    if (!e.dataTransfer?.files.length || e.target.closest?.('[data-drop="learned"]')) return;
    e.preventDefault();
    open(e.dataTransfer.files[0]);
  });
}
