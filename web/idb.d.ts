// Type declarations for web/idb.js: IndexedDB storage behind idb:// locations. Names may be
// given with or without 'idb://'.

/** An entry stored in IndexedDB. */
export interface IdbEntry {
  /** The name after idb://. */
  name: string;
  /** 'idb://' + name: usable wherever a location is accepted. */
  url: string;
  size: number;
  /** Milliseconds since the epoch. */
  modified: number;
}

/** Stores bytes under a name in one transaction (the previous version stays until it commits). */
export declare function save(location: string | URL, bytes: ArrayBuffer | ArrayBufferView): Promise<{ name: string; size: number; modified: number }>;
/** The stored bytes; rejects with a WebtrainError naming the entry when there are none. */
export declare function load(location: string | URL): Promise<Uint8Array<ArrayBuffer>>;
export declare function has(location: string | URL): Promise<boolean>;
/** Entries sorted by name; with a prefix ('dir/' or 'idb://dir/'), those starting with it. */
export declare function list(prefix?: string): Promise<IdbEntry[]>;
/** Deletes every entry (or those starting with prefix); resolves with the count. */
export declare function clear(prefix?: string): Promise<number>;
/**
 * Another database name and/or IndexedDB factory (e.g. fake-indexeddb in Node), and the size of
 * the chunks a checkpoint's side file is stored in (default 64 MiB). Another key is a TypeError.
 */
export declare function configure(options: { database?: string; indexedDB?: IDBFactory | null; chunkBytes?: number }): void;
export declare function close(): void;
export declare function isIdbLocation(location: unknown): boolean;
export declare function entryName(location: string | URL): string;
declare function remove(location: string | URL): Promise<boolean>;
/** Deletes an entry; resolves true if it existed. */
export { remove as delete };
