package io.pintle.bench.plot;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import javax.imageio.ImageIO;

/**
 * The frame every bench plot shares: a white, anti-aliased RGB image with its title in bold at the top left,
 * written as a PNG. The caller draws the rest, starting in black, in the plain 12-point body font.
 */
public final class Canvas {
    private Canvas() {}

    /**
     * @param width the image's width in pixels
     * @param height its height
     * @param title the first line, bold 16 point at (20, 28)
     * @param body draws the plot; the graphics are disposed of afterwards
     * @param file the PNG to write
     * @throws IOException if it cannot be written
     */
    public static void writePng(int width, int height, String title, Consumer<Graphics2D> body, Path file)
            throws IOException {
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, 20, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            body.accept(g);
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
    }
}
