;;; lsp-coder-ghost.el --- lsp-coder's suggestions as ghost text -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: languages, tools, completion

;;; Commentary:

;; `lsp-coder-ghost-mode' shows lsp-coder's suggestion after point as ghost text (an overlay's
;; `after-string'), asked for with textDocument/inlineCompletion through the buffer's own
;; connection: eglot's (lsp-coder.el) or lsp-mode's (lsp-coder-lsp-mode.el), which turn the
;; mode on where lsp-coder serves the buffer.
;;
;; While a suggestion shows, and only then, `lsp-coder-ghost-map' is active:
;;
;;   TAB        accept it                   M-f   accept its next word
;;   C-e        accept the rest of its line  M-n   the next suggestion
;;   C-g        dismiss it                   M-p   the previous one
;;
;; With no suggestion shown every key does what it did before.  Rebind in the map, e.g.
;; (define-key lsp-coder-ghost-map (kbd "TAB") nil) to keep TAB for indentation always.
;; `lsp-coder-suggest' asks at point now.  Typing along the suggestion keeps what is left of
;; it; anything else (a character it does not have, moving away, another buffer) takes it away.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'lsp-coder-ghost-ask
         (expand-file-name "lsp-coder-ghost-ask"
                           (file-name-directory
                            (or load-file-name buffer-file-name
                                (bound-and-true-p byte-compile-current-file)))))

(defcustom lsp-coder-ghost-text t
  "Show lsp-coder's suggestions as ghost text.
The connection then tells the server (the experimental capability
lspCoderGhostText), which leaves its suggestion out of completion lists.
nil: the suggestion comes through `completion-at-point' instead.  Applies
to connections made after the change."
  :type 'boolean
  :group 'lsp-coder-ghost)

(defface lsp-coder-ghost-face '((t :inherit shadow))
  "The face of the suggestion shown as ghost text."
  :group 'lsp-coder-ghost)

(defvar lsp-coder-ghost-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'lsp-coder-accept)
    (define-key map (kbd "<tab>") #'lsp-coder-accept)
    (define-key map (kbd "M-f") #'lsp-coder-accept-word)
    (define-key map (kbd "C-e") #'lsp-coder-accept-line)
    (define-key map (kbd "M-n") #'lsp-coder-next)
    (define-key map (kbd "M-p") #'lsp-coder-previous)
    (define-key map (kbd "C-g") #'lsp-coder-dismiss)
    map)
  "Keys active only while a suggestion shows.")

(defvar-local lsp-coder-ghost--shown nil
  "Non-nil while a suggestion shows: the condition of `lsp-coder-ghost-map'.")

(defvar-local lsp-coder-ghost--state nil
  "The suggestion: a plist of :items (texts that start at :start), :index,
:start (a position), :head (the text of :start's line before it) and
:commands (one per item).")

(defvar-local lsp-coder-ghost--overlay nil)
(defvar-local lsp-coder-ghost--tick nil
  "`buffer-chars-modified-tick' after the last command (did the next edit?).")
(defvar lsp-coder-ghost--buffer nil "The buffer whose suggestion shows, or nil.")

(add-to-list 'emulation-mode-map-alists
             `((lsp-coder-ghost--shown . ,lsp-coder-ghost-map)))

;;;; What is shown

(defun lsp-coder-ghost--remainder ()
  "What is left to show of the current suggestion.
nil when none shows or the text typed since it came no longer matches it."
  (when-let* ((state lsp-coder-ghost--state)
              (start (plist-get state :start))
              ((<= start (point)))
              ((= (line-number-at-pos start) (line-number-at-pos (point))))
              ((equal (buffer-substring-no-properties (line-beginning-position) start)
                      (plist-get state :head)))
              (text (nth (plist-get state :index) (plist-get state :items)))
              (typed (buffer-substring-no-properties start (point)))
              ((< (length typed) (length text)))
              ((string-prefix-p typed text)))
    (substring text (length typed))))

(defun lsp-coder-ghost--draw (rest)
  "Show REST after point."
  (unless (overlayp lsp-coder-ghost--overlay)
    (setq lsp-coder-ghost--overlay (make-overlay (point) (point) nil t nil))
    (overlay-put lsp-coder-ghost--overlay 'priority 1000)
    (overlay-put lsp-coder-ghost--overlay 'lsp-coder-ghost t))
  (move-overlay lsp-coder-ghost--overlay (point) (point) (current-buffer))
  (let ((shown (propertize rest 'face 'lsp-coder-ghost-face)))
    ;; The cursor stays before the suggestion, not after it.
    (put-text-property 0 1 'cursor t shown)
    (overlay-put lsp-coder-ghost--overlay 'after-string shown))
  (setq lsp-coder-ghost--shown t
        lsp-coder-ghost--buffer (current-buffer))
  (add-hook 'post-command-hook #'lsp-coder-ghost--elsewhere))

(defun lsp-coder-ghost--hide ()
  "Take the suggestion of the current buffer off the screen."
  (when (overlayp lsp-coder-ghost--overlay)
    (delete-overlay lsp-coder-ghost--overlay))
  (setq lsp-coder-ghost--overlay nil
        lsp-coder-ghost--state nil
        lsp-coder-ghost--shown nil)
  (when (eq lsp-coder-ghost--buffer (current-buffer))
    (setq lsp-coder-ghost--buffer nil)
    (remove-hook 'post-command-hook #'lsp-coder-ghost--elsewhere)))

(defun lsp-coder-ghost-clear ()
  "Take the suggestion away and drop the answers on their way."
  (lsp-coder-ghost-cancel)
  (lsp-coder-ghost--hide))

(defun lsp-coder-ghost-show (items index position)
  "Show ITEMS, a list of (TEXT . COMMAND) whose texts start at POSITION, the one at INDEX."
  (setq lsp-coder-ghost--state
        (list :items (mapcar #'car items) :commands (mapcar #'cdr items)
              :index index :start position
              :head (buffer-substring-no-properties (line-beginning-position) position)))
  (lsp-coder-ghost--refresh))

(defun lsp-coder-ghost--refresh ()
  "Show what is left of the suggestion after a command.
Nothing when it no longer matches."
  (if-let ((rest (lsp-coder-ghost--remainder)))
      (lsp-coder-ghost--draw rest)
    (when lsp-coder-ghost--state
      (lsp-coder-ghost--hide))))

(defun lsp-coder-ghost-visible-p ()
  "Whether a suggestion shows at point."
  (and lsp-coder-ghost--shown (lsp-coder-ghost--remainder) t))

(defun lsp-coder-ghost--post-command ()
  "After a command in the buffer: keep or take away the suggestion; after an edit, ask."
  (let ((tick (buffer-chars-modified-tick)))
    (lsp-coder-ghost--refresh)
    (when (and (not (eq tick lsp-coder-ghost--tick)) (not (minibufferp)))
      (lsp-coder-ghost--schedule))
    (setq lsp-coder-ghost--tick tick)))

(defun lsp-coder-ghost--elsewhere ()
  "After any command: a suggestion shown in a buffer no longer selected goes."
  (when (and lsp-coder-ghost--buffer
             (not (eq lsp-coder-ghost--buffer (window-buffer (selected-window)))))
    (let ((buffer lsp-coder-ghost--buffer))
      (setq lsp-coder-ghost--buffer nil)
      (remove-hook 'post-command-hook #'lsp-coder-ghost--elsewhere)
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (lsp-coder-ghost-clear))))))

;;;; Commands

(defun lsp-coder-ghost--next-word (text)
  "The next word of TEXT: leading blanks, then a run of word or of other characters."
  (if (string-match "\\`[ \t\n]*\\(?:[[:alnum:]_]+\\|[^[:alnum:]_ \t\n]+\\)" text)
      (match-string 0 text)
    text))

(defun lsp-coder-ghost--next-line (text)
  "The rest of TEXT's first line; when TEXT starts with a line break, it and the next line."
  (if (string-match "\\`\n?[^\n]*" text)
      (match-string 0 text)
    text))

(defun lsp-coder-ghost--accept (pick)
  "Insert the part of the suggestion that PICK (a function of the text left) chooses.
The whole of it runs the item's command (the server counts the acceptance); what is left
of it stays shown."
  (let ((rest (lsp-coder-ghost--remainder)))
    (if (not rest)
        (lsp-coder-ghost-clear)
      (let* ((state lsp-coder-ghost--state)
             (index (plist-get state :index))
             (command (nth index (plist-get state :commands)))
             (part (funcall pick rest)))
        (insert part)
        (if (equal part rest)
            (progn
              (lsp-coder-ghost-clear)
              (when-let ((execute (plist-get lsp-coder-ghost-backend :execute)))
                (when command
                  (funcall execute command))))
          (setq lsp-coder-ghost--state
                (list :items (list (substring rest (length part))) :commands (list command)
                      :index 0 :start (point)
                      :head (buffer-substring-no-properties (line-beginning-position)
                                                            (point))))
          (lsp-coder-ghost--refresh))))))

(defun lsp-coder-accept ()
  "Insert the whole suggestion."
  (interactive)
  (lsp-coder-ghost--accept #'identity))

(defun lsp-coder-accept-word ()
  "Insert the next word of the suggestion."
  (interactive)
  (lsp-coder-ghost--accept #'lsp-coder-ghost--next-word))

(defun lsp-coder-accept-line ()
  "Insert the rest of the suggestion's current line."
  (interactive)
  (lsp-coder-ghost--accept #'lsp-coder-ghost--next-line))

(defun lsp-coder-ghost--cycle (delta)
  "Show the suggestion DELTA places on; with only one, ask the server for others."
  (let ((rest (lsp-coder-ghost--remainder))
        (state lsp-coder-ghost--state))
    (cond
     ((not rest) (lsp-coder-ghost-clear))
     ((cdr (plist-get state :items))
      (setq lsp-coder-ghost--state
            (plist-put state :index (mod (+ (plist-get state :index) delta)
                                         (length (plist-get state :items)))))
      (lsp-coder-ghost--refresh))
     (t
      (let ((command (car (plist-get state :commands))))
        (lsp-coder-ghost-request
         t (lambda (items)
             (let ((items (cons (cons rest command)
                                (cl-remove rest items :key #'car :test #'equal))))
               (cons items (if (cdr items) (mod delta (length items)) 0))))))))))

(defun lsp-coder-next ()
  "Show the next suggestion (the first time, ask lsp-coder for others)."
  (interactive)
  (lsp-coder-ghost--cycle 1))

(defun lsp-coder-previous ()
  "Show the previous suggestion."
  (interactive)
  (lsp-coder-ghost--cycle -1))

(defun lsp-coder-dismiss ()
  "Take the suggestion away until the next edit."
  (interactive)
  (lsp-coder-ghost-clear))

(defun lsp-coder-suggest ()
  "Ask lsp-coder for a suggestion at point now."
  (interactive)
  (lsp-coder-ghost-request t))

;;;###autoload
(define-minor-mode lsp-coder-ghost-mode
  "Show lsp-coder's suggestions as ghost text while typing.
Turned on by lsp-coder.el (eglot) and lsp-coder-lsp-mode.el where lsp-coder serves the
buffer and `lsp-coder-ghost-text' is non-nil.  While a suggestion shows,
`lsp-coder-ghost-map' is active:\\<lsp-coder-ghost-map>
\\[lsp-coder-accept] accepts it, \\[lsp-coder-accept-word] its next word, \\[lsp-coder-accept-line] the rest of its line,
\\[lsp-coder-next] and \\[lsp-coder-previous] show others, \\[lsp-coder-dismiss] takes it away."
  :lighter nil
  (if lsp-coder-ghost-mode
      (progn
        (setq lsp-coder-ghost--tick (buffer-chars-modified-tick))
        (add-hook 'post-command-hook #'lsp-coder-ghost--post-command nil t))
    (remove-hook 'post-command-hook #'lsp-coder-ghost--post-command t)
    (lsp-coder-ghost-clear)))

(provide 'lsp-coder-ghost)
;;; lsp-coder-ghost.el ends here
