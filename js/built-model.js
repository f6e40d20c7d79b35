// A model built by onnxblock.buildModel: its bytes and I/O names. Apart from onnxblock.js so that
// the source reader (bytes.js), which accepts one, need not depend on the builder that reads sources.
export class OnnxblockModel {
  constructor(bytes, inputNames, outputNames) {
    this.bytes = bytes;
    this.inputNames = inputNames;
    this.outputNames = outputNames;
  }
}
