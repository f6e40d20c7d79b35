import { artifacts, CheckpointState, Module } from '../../js/index.js';
import { gpu } from './webgpu-env.mjs';
for (const f of process.argv.slice(2)) {
  try {
    const art = await artifacts.generateArtifacts(f, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    await Module.create(art.trainingModel, state, art.evalModel, { backend: 'webgpu', gpu });
    console.log(f, 'create ok');
  } catch (e) { console.log(f, e.message.slice(0, 400)); }
}
process.exit(0);
