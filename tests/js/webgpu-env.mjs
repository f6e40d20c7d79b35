// The WebGPU the webgpu backend's tests run on: the `webgpu` package's Dawn, which finds a real
// GPU through Vulkan where there is one, else Chromium's SwiftShader (a CPU Vulkan driver that
// Debian's chromium package ships). Not a test file itself.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES && existsSync(SWIFTSHADER)) process.env.VK_ICD_FILENAMES = SWIFTSHADER;
process.env.XDG_RUNTIME_DIR ??= tmpdir();

const { create } = await import('webgpu');

/** A GPU object (Dawn's navigator.gpu) for init({ backend: 'webgpu', gpu }). */
export const gpu = create([]);
