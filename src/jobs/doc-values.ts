// Indices whose MinHash field has no doc values (mapped before near-dup asked for them): lookups read the
// signatures from _source there instead. Learnt once per index and process, by the Jaccard and the
// containment lookups alike (the first search that the engine refuses with 400 tells).
export const withoutDocValues = new Set<string>();
