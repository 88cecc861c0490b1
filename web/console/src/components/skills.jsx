// Skills (SEP-2640) of an installed server, on its Marketplace card (docs/SKILLS.md): what
// its last refresh listed (GET /api/mcp-connections/{id}/skills). Nothing is shown for a
// server without skills, or when the list cannot be read (a member may not read
// connections): the card stays as it was.

import { useEffect, useState } from 'preact/hooks';
import { connections } from '../api.js';

export function CardSkills({ connectionId }) {
  const [skills, setSkills] = useState(null);
  useEffect(() => {
    let live = true;
    connections.skills(connectionId).then(
      (r) => live && setSkills(r.skills || []),
      () => live && setSkills([]),
    );
    return () => {
      live = false;
    };
  }, [connectionId]);
  if (!skills || skills.length === 0) return null;
  return (
    <details class="skills" data-skills={skills.length}>
      <summary>
        {skills.length} {skills.length === 1 ? 'skill' : 'skills'}
      </summary>
      <ul aria-label="Skills">
        {skills.map((s) => (
          <li key={s.uri} data-skill={s.name}>
            <strong>{s.name || s.uri}</strong>
            {s.description ? <span> — {s.description}</span> : null}
            <div class="code-text">
              {s.uri} · {s.files} {s.files === 1 ? 'file' : 'files'}
            </div>
          </li>
        ))}
      </ul>
    </details>
  );
}
