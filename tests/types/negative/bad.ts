// Deliberate type error: tsc must reject this file (see tests/js/types.test.mjs).
import { Optimizer } from 'webtrain';

declare const optimizer: Optimizer;
// setLearningRate takes a number.
optimizer.setLearningRate('0.01');
