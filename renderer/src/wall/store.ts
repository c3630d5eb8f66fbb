/** The wall's grid size, remembered across reloads and restarts (localStorage). */
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import { isWallSize, type WallSize } from './layout';

interface WallSettings {
  size: WallSize;
  setSize(size: WallSize): void;
}

export const useWallSettings = create<WallSettings>()(
  persist(
    (set) => ({
      size: 4,
      setSize: (size) => set({ size }),
    }),
    {
      name: 'vc.wall',
      storage: createJSONStorage(() => localStorage),
      partialize: (state) => ({ size: state.size }),
      // A stored value from another version (or hand-edited) falls back to the default.
      merge: (stored, current) => {
        const size = (stored as { size?: unknown } | undefined)?.size;
        return isWallSize(size) ? { ...current, size } : current;
      },
    },
  ),
);
